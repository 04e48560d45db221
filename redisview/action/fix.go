package action

import "github.com/keydeck/keydeck/redisview/schema"

// FixState is what a page knows of a key's state when it offers a fix.
type FixState struct {
	// Locked: the lock a sliding window sets is present, so the window and
	// its lock are unlocked together.
	Locked bool
	// Idle: the key is known to be untouched (nothing used, not
	// throttled), so there is nothing to reset.
	Idle bool
}

// Fix is the one fixing action offered on a key of family f in state st
// ("" none), the same on the Rate limits, Locks and user pages: a login
// lock, or its failure window while the lock is set, is unlocked (lock
// and window together); a failure counter is cleared; a holder's lock is
// released; any other limit, and a window not locked, is reset unless it
// is idle. The preview confirms, audits and undoes.
func Fix(f *schema.Family, st FixState) string {
	_, window := f.Params.(*schema.SlidingWindowParams)
	switch {
	case (UnlockLogin{}).AppliesTo(f) && (!window || st.Locked):
		return KindUnlockLogin
	case (ClearFailures{}).AppliesTo(f):
		return KindClearFailures
	case (ForceUnlock{}).AppliesTo(f):
		return KindForceUnlock
	case (ResetLimit{}).AppliesTo(f) && !st.Idle:
		return KindResetLimit
	}
	return ""
}
