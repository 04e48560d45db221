package people

import (
	"context"
	"time"
)

// Limiter is what sign-in needs of the attempt counter (LoginLimiter
// keeps the counts in the audit Redis).
type Limiter interface {
	// Attempt reserves an attempt of user from the client address ip; a
	// verdict with a Wait refuses it.
	Attempt(ctx context.Context, user, ip string) Verdict
	// Locked tells how long the address is still locked out of user's
	// account (or of every account); 0 when it may try. It counts nothing.
	Locked(ctx context.Context, user, ip string) time.Duration
	// Succeeded clears the pair's count and returns the address's attempt.
	Succeeded(ctx context.Context, user, ip string)
	// Lockouts lists at most limit lock-outs in force, and how many there are.
	Lockouts(ctx context.Context, limit int) ([]Lockout, int, error)
	// Clear ends the lock-out of ip from user ("": from every account).
	Clear(ctx context.Context, user, ip string) error
	// ReserveGuess reserves an API token lookup from ip before it is
	// made (0), or refuses it (how long to wait): lookups in flight count
	// as failed guesses until ReleaseGuess ends them; busy when refused
	// only for those in flight, not for failures.
	ReserveGuess(ctx context.Context, ip string) (wait time.Duration, busy bool)
	// ReleaseGuess ends a lookup ReserveGuess admitted (a failed one after
	// its Attempt, so that it stays counted).
	ReleaseGuess(ctx context.Context, ip string)
}

// TokenGuesses is the account failed API token guesses are counted
// against (per address, like a password's): account names hold no spaces,
// so no account is spelled like it.
const TokenGuesses = "(API tokens)"

var (
	_ Limiter     = (*LoginLimiter)(nil)
	_ Revocations = (*SessionStore)(nil)
)
