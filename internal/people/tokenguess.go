package people

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// guessHold bounds how long a reserved token lookup counts as in flight
// should its replica die before releasing it (or its release be lost).
const guessHold = 10 * time.Second

// flightKey holds addr's token lookups in flight (reserved, not yet
// released or counted as failed): a sorted set of one member per
// reservation, scored by the epoch ms it expires at, so that a leaked
// one expires on its own however many are admitted after it.
func (l *LoginLimiter) flightKey(addr string) string { return l.prefix + "tokflights:" + addr }

// flight is one lookup in flight reserved by this process: its member in
// the address's set ("" when it was counted here only, the store being
// unreachable), and when it stops counting.
type flight struct {
	id    string
	until time.Time
}

// reserveGuess admits a token lookup from an address when its failed
// guesses (the pair's count) plus its lookups in flight stay under the
// pair's limit, and the address's failures plus those in flight under
// the address's; reservations past their expiry are dropped first.
// KEYS: pair, address, flights; ARGV: per pair, per address, now ms,
// hold ms, reservation id. Returns 1 admitted, 2 refused for the lookups
// in flight, 0 refused for failures.
var reserveGuess = redis.NewScript(`
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', ARGV[3])
local p = tonumber(redis.call('GET', KEYS[1]) or '0') or 0
local a = tonumber(redis.call('GET', KEYS[2]) or '0') or 0
local f = redis.call('ZCARD', KEYS[3])
if p >= tonumber(ARGV[1]) or a >= tonumber(ARGV[2]) then return 0 end
if p + f >= tonumber(ARGV[1]) or a + f >= tonumber(ARGV[2]) then return 2 end
redis.call('ZADD', KEYS[3], tonumber(ARGV[3]) + tonumber(ARGV[4]), ARGV[5])
redis.call('PEXPIRE', KEYS[3], ARGV[4])
return 1`)

// ReserveGuess reserves a token lookup from addr before the token is
// looked up, so that parallel wrong guesses cannot all pass a check made
// before any of them failed: the lookups in flight count as failures
// until released, or until guessHold after each one's reservation. 0
// admits it; otherwise how long to wait (the address's lock-out, or a
// second while others are in flight), and busy when it was refused only
// for the lookups in flight (not for failures): a place frees up as soon
// as one ends. An admitted lookup is ended by ReleaseGuess — after
// Attempt when it failed, so that it is counted throughout.
func (l *LoginLimiter) ReserveGuess(ctx context.Context, addr string) (wait time.Duration, busy bool) {
	if wait := l.Locked(ctx, TokenGuesses, addr); wait > 0 {
		return wait, false
	}
	pair, ad, _, _ := l.keys(TokenGuesses, addr)
	now := l.now()
	err := errors.New("no store")
	if l.client != nil {
		b := make([]byte, 12)
		_, _ = rand.Read(b)
		id := hex.EncodeToString(b)
		var ok int
		ok, err = reserveGuess.Run(ctx, l.client, []string{pair, ad, l.flightKey(addr)},
			l.policy.PerPair, l.policy.PerAddr, now.UnixMilli(), guessHold.Milliseconds(), id).Int()
		if err == nil {
			if ok == 1 {
				l.mu.Lock()
				l.addFlight(addr, flight{id: id, until: now.Add(guessHold)})
				l.mu.Unlock()
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
	l.mu.Lock()
	defer l.mu.Unlock()
	n := func(k string) int {
		if c, ok := l.local[k]; ok && now.Before(c.reset) {
			return c.n
		}
		return 0
	}
	f := 0
	for _, x := range l.flights[addr] {
		if x.id == "" && now.Before(x.until) {
			f++
		}
	}
	if n(pair) >= l.policy.PerPair || n(ad) >= l.policy.PerAddr {
		return time.Second, false
	}
	if n(pair)+f >= l.policy.PerPair || n(ad)+f >= l.policy.PerAddr {
		return time.Second, true
	}
	l.addFlight(addr, flight{until: now.Add(guessHold)})
	return 0, false
}

// addFlight notes a lookup this process reserved, dropping those past
// their hold; l.mu is held.
func (l *LoginLimiter) addFlight(addr string, x flight) {
	if l.flights == nil {
		l.flights = map[string][]flight{}
	}
	now := l.now()
	keep := l.flights[addr][:0]
	for _, y := range l.flights[addr] {
		if now.Before(y.until) {
			keep = append(keep, y)
		}
	}
	l.flights[addr] = append(keep, x)
}

// ReleaseGuess ends a lookup ReserveGuess admitted: one of this process's
// reservations for addr (they are alike), the oldest. A release that
// cannot reach the store leaves that reservation to expire on its own.
func (l *LoginLimiter) ReleaseGuess(ctx context.Context, addr string) {
	l.mu.Lock()
	fs := l.flights[addr]
	if len(fs) == 0 {
		l.mu.Unlock()
		return
	}
	x := fs[0]
	if len(fs) == 1 {
		delete(l.flights, addr)
	} else {
		l.flights[addr] = fs[1:]
	}
	l.mu.Unlock()
	if x.id != "" && l.client != nil {
		_ = l.client.ZRem(ctx, l.flightKey(addr), x.id).Err()
	}
}
