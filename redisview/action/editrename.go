package action

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview/schema"
)

// RenameKey renames a key (RENAME: value and TTL move). A target that
// exists is refused unless replace is asked; then the preview says it is
// overwritten, and its prior value is recorded like the source's, so undo
// puts both back.
type RenameKey struct{}

// Persist removes a key's TTL: set-ttl's "persist", as a button of its own.
type Persist struct{}

func init() {
	Register(RenameKey{})
	Register(Persist{})
}

func (RenameKey) Name() string    { return KindRenameKey }
func (RenameKey) Title() string   { return "Rename" }
func (RenameKey) Requires() Level { return Admin }
func (RenameKey) Args() []Arg {
	return []Arg{
		{Name: ArgTarget, Help: "the new name, exactly"},
		{Name: ArgReplace, Help: "overwrite the target if it exists (recorded, so undo restores it)", Input: InputCheckbox, Optional: true},
	}
}

func (RenameKey) Plan(_ context.Context, env Env, req Request) (Plan, error) {
	if err := checkArgs(req, ArgTarget, ArgReplace); err != nil {
		return nil, err
	}
	target := req.Args[ArgTarget]
	replace, err := flag(req, ArgReplace)
	switch {
	case err != nil:
		return nil, err
	case req.Key == "":
		return nil, invalidf("key is required")
	case target == "":
		return nil, invalidf("target is required")
	case target == req.Key:
		return nil, invalidf("the target is the key's own name")
	}
	return renamePlan{from: req.Key, to: target, replace: replace, snapped: new(string),
		fromFam: familyOf(env, req.DB, req.Key), toFam: familyOf(env, req.DB, target)}, nil
}

type renamePlan struct {
	from, to string
	replace  bool
	// snapped is the type of a source read element-wise (see Snapshot:
	// the demo, a server refusing DUMP), set by Describe under WATCH: the
	// target is then read back the same way, as that type, or the state
	// the rename leaves could not be fingerprinted and undone.
	snapped *string
	// fromFam and toFam are the keys' families: the value moved must be
	// one the target's family reads.
	fromFam, toFam *schema.Family
}

func (p renamePlan) captureHint(i int) (string, string) {
	if i == 1 && *p.snapped != "" {
		return captureSnapshot, *p.snapped
	}
	return "", ""
}

func (p renamePlan) Keys() []string { return []string{p.from, p.to} }

func (p renamePlan) Notes() []string {
	if p.replace {
		return []string{"Replace is asked: if the target exists, its value is overwritten; it is recorded first, so undo restores it."}
	}
	return nil
}

func (p renamePlan) Describe(states []State) ([]Change, error) {
	from, to := states[0], states[1]
	if *p.snapped = ""; from.snap != nil {
		*p.snapped = from.snap.Type
	}
	if !from.Exists() {
		return nil, fmt.Errorf("%w: key %s does not exist", ErrNotFound, quoteKey(from.Key))
	}
	if err := p.checkShape(from); err != nil {
		return nil, err
	}
	if to.Exists() && !p.replace {
		return nil, invalidf("the target %s exists (%s); ask to replace it to overwrite it", quoteKey(to.Key), to.Shape())
	}
	moved := from
	moved.Key = to.Key
	toText := fmt.Sprintf("CREATE %s as %s (the value of %s)", quoteKey(to.Key), from.Shape(), quoteKey(from.Key))
	if to.Exists() {
		toText = fmt.Sprintf("OVERWRITE %s (%s) with %s (the value of %s)", quoteKey(to.Key), to.Shape(), from.Shape(), quoteKey(from.Key))
	}
	return []Change{
		{Key: from.Key, Op: "rename", After: "absent", Before: from,
			Text: fmt.Sprintf("RENAME %s to %s (%s)", quoteKey(from.Key), quoteKey(to.Key), from.Shape())},
		{Key: to.Key, Op: "rename", After: moved.Shape(), Before: to, Text: toText},
	}, nil
}

// checkShape refuses moving a value the target's family cannot read: of
// another type, or, where the family judges values (token bucket,
// Bucket4j, counters), from a key outside that family (its value is not
// read whole here to judge it).
func (p renamePlan) checkShape(from State) error {
	f := p.toFam
	if err := checkTypeShape(f, from.Type); err != nil || f == nil || p.fromFam == f {
		return err
	}
	switch _, bucket := tokenBucket(f); {
	case bucket, f.Role == schema.RoleBucket4j, f.Role == schema.RoleCounter, f.Role == schema.RoleCounterWindow, f.Role == schema.RoleQuota:
		return shapeRefusal(f, "are renamed into only from a key of the same family, whose value it is known to read")
	}
	return nil
}

func (p renamePlan) Apply(ctx context.Context, tx redis.Pipeliner, _ []State) {
	tx.Rename(ctx, p.from, p.to)
}

func (Persist) Name() string    { return KindPersist }
func (Persist) Title() string   { return "Remove TTL (persist)" }
func (Persist) Requires() Level { return Admin }
func (Persist) Args() []Arg     { return nil }

func (Persist) Plan(_ context.Context, _ Env, req Request) (Plan, error) {
	if err := checkArgs(req); err != nil {
		return nil, err
	}
	return ttlPlan{key: req.Key, persist: true}, nil
}
