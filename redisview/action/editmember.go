package action

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview/schema"
)

// SetHashField sets one field of a hash (HSET), creating the hash if it is
// absent. It acts on that field only (MemberPlan): undo puts the field's
// value back, or removes a field that was not there.
type SetHashField struct{}

// AddSetMember adds a member to a set (SADD); undo removes it.
type AddSetMember struct{}

// AddZSetMember adds a member to a sorted set with a score, or changes its
// score (ZADD); undo puts the score back, or removes a new member.
type AddZSetMember struct{}

func init() {
	Register(SetHashField{})
	Register(AddSetMember{})
	Register(AddZSetMember{})
}

func (SetHashField) Name() string    { return KindSetHashField }
func (SetHashField) Title() string   { return "Set field" }
func (SetHashField) Requires() Level { return Admin }
func (SetHashField) KeyType() string { return "hash" }
func (SetHashField) Args() []Arg {
	return append([]Arg{{Name: ArgField, Help: "the field, exactly as stored (a new one is added)", Data: true}},
		valueArgs("its new value, exactly")...)
}

func (SetHashField) Plan(_ context.Context, env Env, req Request) (Plan, error) {
	if err := checkArgs(req, ArgField, ArgValue, ArgEncoding); err != nil {
		return nil, err
	}
	field, ok := req.Args[ArgField]
	switch {
	case !ok:
		return nil, invalidf("field is required (an empty field is sent as an empty argument)")
	case len(field) > maxKeyBytes:
		return nil, invalidf("field longer than %d bytes", maxKeyBytes)
	}
	v, err := decodeValue(req, true)
	if err != nil {
		return nil, err
	}
	fam := familyOf(env, req.DB, req.Key)
	if err := checkTypeShape(fam, "hash"); err != nil {
		return nil, err
	}
	if err := checkFieldShape(fam, field, v); err != nil {
		return nil, err
	}
	return partPlan{key: req.Key, ref: MemberRef{Kind: PartHField, Name: field}, value: v, family: fam}, nil
}

func (AddSetMember) Name() string    { return KindAddSetMember }
func (AddSetMember) Title() string   { return "Add member" }
func (AddSetMember) Requires() Level { return Admin }
func (AddSetMember) KeyType() string { return "set" }
func (AddSetMember) Args() []Arg {
	return []Arg{{Name: ArgMember, Help: "the member to add, exactly", Data: true, Input: InputTextarea}}
}

func (AddSetMember) Plan(_ context.Context, env Env, req Request) (Plan, error) {
	if err := checkArgs(req, ArgMember); err != nil {
		return nil, err
	}
	fam := familyOf(env, req.DB, req.Key)
	if err := checkTypeShape(fam, "set"); err != nil {
		return nil, err
	}
	if fam != nil && fam.Role == schema.RoleBloomMembers {
		// The application checks the bloom first: a member added without
		// its bits would be in the list and never found there.
		return nil, shapeRefusal(fam, "are added to together with their bloom's bits (a ban list: the action "+KindBan+", from its page), or the application, asking the bloom first, never finds the member")
	}
	m, err := memberArg(req)
	if err != nil {
		return nil, err
	}
	return partPlan{key: req.Key, ref: MemberRef{Kind: PartSMember, Name: m}}, nil
}

func (AddZSetMember) Name() string    { return KindAddZSetMember }
func (AddZSetMember) Title() string   { return "Add member or set score" }
func (AddZSetMember) Requires() Level { return Admin }
func (AddZSetMember) KeyType() string { return "zset" }
func (AddZSetMember) Args() []Arg {
	return []Arg{
		{Name: ArgMember, Help: "the member, exactly (a new one is added, an existing one gets the score)", Data: true, Input: InputTextarea},
		{Name: ArgScore, Help: "its score (a number: 12, -3.5, 1e9, inf)", Data: true},
	}
}

func (AddZSetMember) Plan(_ context.Context, env Env, req Request) (Plan, error) {
	if err := checkArgs(req, ArgMember, ArgScore); err != nil {
		return nil, err
	}
	if err := checkTypeShape(familyOf(env, req.DB, req.Key), "zset"); err != nil {
		return nil, err
	}
	m, err := memberArg(req)
	if err != nil {
		return nil, err
	}
	score, ok := parseScore(req.Args[ArgScore])
	if !ok {
		return nil, invalidf("score is not a number")
	}
	return partPlan{key: req.Key, ref: MemberRef{Kind: PartZMember, Name: m, Desc: descending(env, req.DB, req.Key)}, score: score}, nil
}

func memberArg(req Request) (string, error) {
	m, ok := req.Args[ArgMember]
	switch {
	case !ok:
		return "", invalidf("member is required (an empty member is sent as an empty argument)")
	case len(m) > MaxEditBytes:
		return "", invalidf("the member is longer than 1 MiB")
	}
	return m, nil
}

// partPlan writes one part of a key: a hash field's value, a set member,
// a sorted-set member's score.
type partPlan struct {
	key   string
	ref   MemberRef
	value string  // hash field
	score float64 // sorted-set member
	// family is the key's, for a hash field: a token bucket is created
	// whole (both its fields), never one field at a time.
	family *schema.Family
}

func (p partPlan) Keys() []string                { return []string{p.key} }
func (p partPlan) Members() map[string]MemberRef { return map[string]MemberRef{p.key: p.ref} }

func (p partPlan) Describe(states []State) ([]Change, error) {
	s := states[0]
	if err := wantType(s, p.ref.keyType(), false); err != nil {
		return nil, err
	}
	if tb, ok := tokenBucket(p.family); ok && !s.Exists() {
		return nil, shapeRefusal(p.family, "are created whole, with both "+strconv.Quote(tb.TokensField)+" and "+strconv.Quote(tb.TimeField)+" (Create key), not one field at a time")
	}
	m := s.Member
	noun := partNoun(p.ref.Kind)
	what := partWords(s, noun, p.ref.Name)
	size := State{Key: s.Key, Type: p.ref.keyType(), PTTL: s.PTTL, Size: max(s.Size, 0), Unit: s.Unit}
	// A sensitive key's answer never depends on what it holds: a refused
	// no-op, or a size one more when the part is absent, would tell an
	// admin whether a guess is right without writing (or recording) a thing.
	known := !s.Sensitive
	if known && !m.Present {
		size.Size++
	}
	if size.Unit == "" {
		size.Unit = map[string]string{PartHField: "fields"}[p.ref.Kind]
		if size.Unit == "" {
			size.Unit = "members"
		}
	}
	var text string
	switch p.ref.Kind {
	case PartHField:
		if known && m.Present && m.Value == p.value {
			return nil, invalidf("%s of %s already holds this value", what, quoteKey(s.Key))
		}
		before := "absent"
		switch {
		case !known:
			before = s.Shape()
		case m.Present:
			before = valueWords(s, m.Value)
		}
		text = fmt.Sprintf("SET %s of %s to %s (before: %s)", what, quoteKey(s.Key), valueWords(s, p.value), before)
	case PartSMember:
		if known && m.Present {
			return nil, invalidf("%s is already in %s", what, quoteKey(s.Key))
		}
		text = fmt.Sprintf("ADD %s to %s (before: %s)", what, quoteKey(s.Key), s.Shape())
	default:
		score := formatScore(p.score)
		switch {
		case known && m.Present && m.Score == score:
			return nil, invalidf("%s of %s already has this score", what, quoteKey(s.Key))
		case s.Sensitive:
			text = fmt.Sprintf("SET the score of %s in %s (before: %s)", what, quoteKey(s.Key), s.Shape())
		case m.Present:
			text = fmt.Sprintf("SET SCORE of %s in %s from %s to %s", what, quoteKey(s.Key), m.Score, score)
		default:
			text = fmt.Sprintf("ADD %s to %s with score %s (before: %s)", what, quoteKey(s.Key), score, s.Shape())
		}
	}
	after := size.Shape()
	if !known {
		after += ", or one " + strings.TrimSuffix(size.Unit, "s") + " more"
	}
	return []Change{{Key: s.Key, Op: "add-member", After: after, Before: s, Text: text}}, nil
}

func (p partPlan) Apply(ctx context.Context, tx redis.Pipeliner, _ []State) {
	switch p.ref.Kind {
	case PartHField:
		tx.HSet(ctx, p.key, p.ref.Name, p.value)
	case PartSMember:
		tx.SAdd(ctx, p.key, p.ref.Name)
	default:
		tx.ZAdd(ctx, p.key, redis.Z{Score: p.score, Member: p.ref.Name})
	}
}
