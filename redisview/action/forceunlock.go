package action

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview/schema"
)

// ForceUnlock releases a lock (role lock) whose holder died or hangs, by
// deleting it. The preview shows the holder (the start of the value, as
// State.Excerpt; not for a sensitive family) and the TTL.
//
// It deletes the lock only if it is still exactly the one shown: the
// Runner compares the key's fingerprint (type, whole value, absolute
// expiry) under WATCH with the preview's, so a lock that expired and was
// taken again by another holder since the preview is refused with
// ErrChanged and left alone, and a re-take after that read makes EXEC
// fail. A lock whose value does not name its holder ("1") is told apart
// by its new expiry time; on servers before Redis 7 (no PEXPIRETIME) only
// the value is compared, so such a re-take goes unnoticed there.
//
// A lock holding its unlock time (the login lock, see isLimitLock) is no
// worker's lock: it is refused here and reset with Reset limit. Admin can
// undo the release like a delete.
type ForceUnlock struct{}

func init() {
	Register(ForceUnlock{})
}

func (ForceUnlock) Name() string    { return KindForceUnlock }
func (ForceUnlock) Title() string   { return "Force-release lock" }
func (ForceUnlock) Requires() Level { return Support }
func (ForceUnlock) Args() []Arg     { return nil }

const lockKeys = "locks (role lock) held by a worker"

// AppliesTo is true for role lock, except a lock holding an unlock time.
func (ForceUnlock) AppliesTo(f *schema.Family) bool {
	return f != nil && f.Role == schema.RoleLock && !isLimitLock(f)
}

func (k ForceUnlock) Plan(_ context.Context, env Env, req Request) (Plan, error) {
	if err := checkArgs(req); err != nil {
		return nil, err
	}
	m, _, err := classify(env, k, req, lockKeys)
	if err != nil {
		return nil, err
	}
	if isLimitLock(m.Family) {
		return nil, invalidf("%s applies only to %s; %s is family %s (role %s), whose value is the unlock time a rate limit set, not a holder: use %s",
			k.Title(), lockKeys, quoteKey(req.Key), m.Family.ID, m.Family.Role, ResetLimit{}.Title())
	}
	if !k.AppliesTo(m.Family) {
		return nil, notApplicable(k, lockKeys, req.Key, m.Family)
	}
	return unlockPlan{key: req.Key, fam: m.Family}, nil
}

type unlockPlan struct {
	key string
	fam *schema.Family
}

func (p unlockPlan) Keys() []string { return []string{p.key} }

func (p unlockPlan) Describe(states []State) ([]Change, error) {
	s := states[0]
	if !s.Exists() {
		return nil, fmt.Errorf("%w: lock %s is not held (it expired or was released)", ErrNotFound, quoteKey(s.Key))
	}
	if p.fam.TypeViolation(s.Type) != "" {
		return nil, typeMismatch(ForceUnlock{}, s, p.fam)
	}
	return []Change{{
		Key: s.Key, Op: "delete", After: "absent", Before: s,
		Text: fmt.Sprintf("RELEASE LOCK %s (family %s, %s: %s; %s), only if it still holds exactly this value and expiry",
			quoteKey(s.Key), p.fam.ID, p.fam.Role, p.holder(s), s.Shape()),
	}}, nil
}

// holder says who holds the lock, from the excerpt of its value.
func (p unlockPlan) holder(s State) string {
	switch {
	case s.Sensitive:
		return "holder not shown (sensitive)"
	case s.Truncated:
		return fmt.Sprintf("held by %q…", s.Excerpt)
	}
	if lp, ok := p.fam.Params.(*schema.LockParams); ok && lp.Value == "1" {
		return fmt.Sprintf("value %q, which does not name its holder", s.Excerpt)
	}
	return fmt.Sprintf("held by %q", s.Excerpt)
}

func (p unlockPlan) Apply(ctx context.Context, tx redis.Pipeliner, _ []State) {
	tx.Del(ctx, p.key)
}
