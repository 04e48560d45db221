package people

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// guessHold bounds how long a reserved token lookup counts as in flight
// should its replica die before releasing it.
const guessHold = 10 * time.Second

// flightKey counts addr's token lookups in flight (reserved, not yet
// released or counted as failed).
func (l *LoginLimiter) flightKey(addr string) string { return l.prefix + "tokflight:" + addr }

// reserveGuess admits a token lookup from an address when its failed
// guesses (the pair's count) plus its lookups in flight stay under the
// pair's limit, and the address's failures plus those in flight under
// the address's. KEYS: pair, address, flight; ARGV: per pair, per
// address, hold ms. Returns 1 admitted, 0 refused.
var reserveGuess = redis.NewScript(`
local p = tonumber(redis.call('GET', KEYS[1]) or '0') or 0
local a = tonumber(redis.call('GET', KEYS[2]) or '0') or 0
local f = tonumber(redis.call('GET', KEYS[3]) or '0') or 0
if f < 0 then f = 0 end
if p >= tonumber(ARGV[1]) or a >= tonumber(ARGV[2]) then return 0 end
if p + f >= tonumber(ARGV[1]) or a + f >= tonumber(ARGV[2]) then return 2 end
redis.call('SET', KEYS[3], f + 1, 'PX', ARGV[3])
return 1`)

var releaseGuess = redis.NewScript(`
local f = tonumber(redis.call('GET', KEYS[1]) or '0') or 0
if f <= 1 then redis.call('DEL', KEYS[1]) else redis.call('DECR', KEYS[1]) end
return 0`)

// ReserveGuess reserves a token lookup from addr before the token is
// looked up, so that parallel wrong guesses cannot all pass a check made
// before any of them failed: the lookups in flight count as failures
// until released. 0 admits it; otherwise how long to wait (the
// address's lock-out, or a second while others are in flight), and
// busy when it was refused only for the lookups in flight (not for
// failures): a place frees up as soon as one ends. An
// admitted lookup is ended by ReleaseGuess — after Attempt when it
// failed, so that it is counted throughout.
func (l *LoginLimiter) ReserveGuess(ctx context.Context, addr string) (wait time.Duration, busy bool) {
	if wait := l.Locked(ctx, TokenGuesses, addr); wait > 0 {
		return wait, false
	}
	pair, ad, _, _ := l.keys(TokenGuesses, addr)
	err := errors.New("no store")
	if l.client != nil {
		var ok int
		ok, err = reserveGuess.Run(ctx, l.client, []string{pair, ad, l.flightKey(addr)},
			l.policy.PerPair, l.policy.PerAddr, guessHold.Milliseconds()).Int()
		if err == nil {
			if ok == 1 {
				return 0, false
			}
			return max(l.Locked(ctx, TokenGuesses, addr), time.Second), ok == 2
		}
		if ctx.Err() != nil {
			// The caller gave up, the store did not fail: no fallback.
			return time.Second, true
		}
	}
	// The store cannot be reached: this process's counts.
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	n := func(k string) int {
		if c, ok := l.local[k]; ok && now.Before(c.reset) {
			return c.n
		}
		return 0
	}
	fk := l.flightKey(addr)
	f := n(fk)
	if n(pair) >= l.policy.PerPair || n(ad) >= l.policy.PerAddr {
		return time.Second, false
	}
	if n(pair)+f >= l.policy.PerPair || n(ad)+f >= l.policy.PerAddr {
		return time.Second, true
	}
	l.local[fk] = localCount{n: f + 1, reset: now.Add(guessHold)}
	return 0, false
}

// ReleaseGuess ends a lookup ReserveGuess admitted.
func (l *LoginLimiter) ReleaseGuess(ctx context.Context, addr string) {
	fk := l.flightKey(addr)
	if l.client != nil {
		_ = releaseGuess.Run(ctx, l.client, []string{fk}).Err()
	}
	l.mu.Lock()
	if c, ok := l.local[fk]; ok {
		if c.n <= 1 {
			delete(l.local, fk)
		} else {
			c.n--
			l.local[fk] = c
		}
	}
	l.mu.Unlock()
}
