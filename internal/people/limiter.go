package people

import "context"

// Limiter is what sign-in needs of the attempt counter (LoginLimiter
// keeps the counts in the audit Redis).
type Limiter interface {
	// Attempt reserves an attempt of user from the client address ip; a
	// verdict with a Wait refuses it.
	Attempt(ctx context.Context, user, ip string) Verdict
	// Succeeded clears the pair's count and returns the address's attempt.
	Succeeded(ctx context.Context, user, ip string)
	// Lockouts lists at most limit lock-outs in force, and how many there are.
	Lockouts(ctx context.Context, limit int) ([]Lockout, int, error)
	// Clear ends the lock-out of ip from user ("": from every account).
	Clear(ctx context.Context, user, ip string) error
}

var (
	_ Limiter     = (*LoginLimiter)(nil)
	_ Revocations = (*SessionStore)(nil)
)
