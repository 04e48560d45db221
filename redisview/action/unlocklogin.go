package action

import (
	"context"

	"github.com/keydeck/keydeck/redisview/schema"
)

// KindUnlockLogin names UnlockLogin in requests and the audit log.
const KindUnlockLogin = "unlock-login"

// UnlockLogin lets a user locked out by too many failures log in again: it
// deletes the lock a sliding window sets when exceeded
// (SlidingWindowParams.Lock) and that failure window, together, in one
// transaction: the lock alone would leave the window full, so the very
// next failure would lock again; the window alone would leave the user
// locked. It is Reset limit narrowed to such pairs, so the pair is found
// from either key, both are watched, recorded and restored by undo.
type UnlockLogin struct{}

func init() {
	Register(UnlockLogin{})
}

func (UnlockLogin) Name() string    { return KindUnlockLogin }
func (UnlockLogin) Title() string   { return "Unlock login" }
func (UnlockLogin) Requires() Level { return Support }
func (UnlockLogin) Args() []Arg     { return nil }

const loginKeys = "failure windows that lock (role sliding-window with a lock) and the locks they set"

// AppliesTo is true for a sliding window naming a lock, and for a lock
// holding an unlock time.
func (UnlockLogin) AppliesTo(f *schema.Family) bool {
	if f == nil {
		return false
	}
	if sw, ok := f.Params.(*schema.SlidingWindowParams); ok {
		return sw.Lock != nil && sw.Lock.Family != nil
	}
	return isLimitLock(f)
}

func (k UnlockLogin) Plan(ctx context.Context, env Env, req Request) (Plan, error) {
	if err := checkArgs(req); err != nil {
		return nil, err
	}
	m, _, err := classify(env, k, req, loginKeys)
	if err != nil {
		return nil, err
	}
	if !k.AppliesTo(m.Family) {
		return nil, notApplicable(k, loginKeys, req.Key, m.Family)
	}
	return ResetLimit{}.Plan(ctx, env, req)
}
