package action

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview/schema"
)

// RemoveSetMember removes one member from a set: a stale slot of a
// concurrency set, a name from an exact ban list. The set is acted on by
// member (MemberPlan): other members coming and going between the preview
// and the confirmation do not refuse it, the member itself leaving does;
// the audit records the member, never the whole set, and undo adds it back.
type RemoveSetMember struct{}

func init() {
	Register(RemoveSetMember{})
	Register(RemoveHashField{})
}

// RemoveHashField deletes one field of a hash, leaving the others: one
// stale entry of a config hash, one counter of a stats hash. Recorded and
// undone by that field alone (MemberPlan), like RemoveSetMember.
type RemoveHashField struct{}

// Names of the part-level kinds and their arguments.
const (
	KindRemoveSetMember = "remove-set-member"
	KindRemoveHashField = "remove-hash-field"
	ArgMember           = "member"
	ArgField            = "field"
)

func (RemoveSetMember) Name() string    { return KindRemoveSetMember }
func (RemoveSetMember) Title() string   { return "Remove set member" }
func (RemoveSetMember) Requires() Level { return Admin }
func (RemoveSetMember) Args() []Arg {
	return []Arg{{Name: ArgMember, Help: "the member to remove, exactly as stored", Data: true}}
}

// AppliesTo is true for families of type set, and for keys no pack
// describes (the plan checks the type).
func (RemoveSetMember) AppliesTo(f *schema.Family) bool { return f == nil || f.Type == "set" }

// KeyType is the Redis type of the keys it acts on, for offering it.
func (RemoveSetMember) KeyType() string { return "set" }

func (k RemoveSetMember) Plan(_ context.Context, _ Env, req Request) (Plan, error) {
	return planPart(k, req, ArgMember, PartSMember)
}

func (RemoveHashField) Name() string    { return KindRemoveHashField }
func (RemoveHashField) Title() string   { return "Remove hash field" }
func (RemoveHashField) Requires() Level { return Admin }
func (RemoveHashField) Args() []Arg {
	return []Arg{{Name: ArgField, Help: "the field to remove, exactly as stored", Data: true}}
}

// AppliesTo is true for families of type hash, and for keys no pack
// describes.
func (RemoveHashField) AppliesTo(f *schema.Family) bool { return f == nil || f.Type == "hash" }

// KeyType is the Redis type of the keys it acts on, for offering it.
func (RemoveHashField) KeyType() string { return "hash" }

func (k RemoveHashField) Plan(_ context.Context, _ Env, req Request) (Plan, error) {
	return planPart(k, req, ArgField, PartHField)
}

func planPart(k Kind, req Request, arg, kind string) (Plan, error) {
	if err := checkArgs(req, arg); err != nil {
		return nil, err
	}
	name := req.Args[arg]
	switch {
	case req.Key == "":
		return nil, invalidf("key is required")
	case name == "":
		return nil, invalidf("%s is required", arg)
	case len(name) > maxKeyBytes:
		return nil, invalidf("%s longer than %d bytes", arg, maxKeyBytes)
	}
	return removePartPlan{kind: k, key: req.Key, part: MemberRef{Kind: kind, Name: name}}, nil
}

type removePartPlan struct {
	kind Kind
	key  string
	part MemberRef
}

func (p removePartPlan) Keys() []string                { return []string{p.key} }
func (p removePartPlan) Members() map[string]MemberRef { return map[string]MemberRef{p.key: p.part} }

func (p removePartPlan) Describe(states []State) ([]Change, error) {
	s := states[0]
	noun, name := partNoun(p.part.Kind), quoteKey(p.part.Name)
	if s.Sensitive {
		name = "the " + noun + " named"
	}
	if want := p.part.keyType(); s.Exists() && s.Type != want {
		return nil, invalidf("%s is a %s, not a %s: %s does not apply", quoteKey(s.Key), s.Type, want, p.kind.Title())
	}
	if s.Member == nil || !s.Member.Present {
		return nil, fmt.Errorf("%w: %s %s is not in %s", ErrNotFound, noun, name, quoteKey(s.Key))
	}
	after := "without " + name
	if s.Size == 1 {
		after = "absent (it was the last " + noun + ")"
	} else if s.Size > 1 {
		after = fmt.Sprintf("%s (%d %s left)", after, s.Size-1, s.Unit)
	}
	detail := ""
	if p.part.Kind == PartHField && !s.Sensitive {
		detail = fmt.Sprintf(" (value %q)", clipText(s.Member.Value, 80))
	}
	return []Change{{Key: s.Key, Op: "remove-member", After: after, Before: s,
		Text: fmt.Sprintf("REMOVE %s %s%s from %s (%s), only if it is still there unchanged", noun, name, detail, quoteKey(s.Key), s.Shape())}}, nil
}

func (p removePartPlan) Apply(ctx context.Context, tx redis.Pipeliner, _ []State) {
	if p.part.Kind == PartHField {
		tx.HDel(ctx, p.key, p.part.Name)
	} else {
		tx.SRem(ctx, p.key, p.part.Name)
	}
}
