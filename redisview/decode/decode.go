// Package decode reads what a key means by its family's role, from the
// pack's parameters: a token bucket's tokens now, a fixed window's count
// against its limit, a sliding window's events, a lock's holder. Every read
// is bounded (HMGET of named fields, GET of a string whose STRLEN is checked
// first, ZCOUNT and ZRANGE with LIMIT), and a sensitive family is never
// read at all.
package decode

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview/schema"
)

// maxSmall is the longest string value decoded (a count, a lock holder, an
// unlock time): a longer one is not what the role says it is.
const maxSmall = 256

// ErrNotDecodable: the value is not in the shape the role describes (a
// count that is not a number, a missing field); Result.Note says why.
var ErrNotDecodable = errors.New("not decodable")

// Result is what a key means. Exactly one role pointer is set when the key
// was decoded; Sensitive when it was not read because its family is
// sensitive; Note says why nothing was decoded otherwise.
type Result struct {
	Role      schema.Role
	Sensitive bool
	Note      string

	TokenBucket   *TokenBucket
	CounterWindow *CounterWindow
	SlidingWindow *SlidingWindow
	Lock          *Lock
	Quota         *Quota
	Balance       *Balance
	Bucket4j      *Bucket4j

	Reservation    *Reservation
	ConcurrencySet *ConcurrencySet
	BreakerHint    *BreakerHint
	Leaderboard    *Leaderboard
	Bloom          *Bloom
	Cooldown       *Cooldown
	Counter        *Counter
	Marker         *Marker // idempotency and nonce
	Stats          *Stats
}

// Env is what a decode needs beyond the key's own family: the pack the
// family belongs to (to find a companion family, such as the reservation
// a concurrency set's member names) and the database the key is in.
type Env struct {
	Pack *schema.Pack
	DB   int
}

// Supported reports whether a role has a decoder.
func Supported(r schema.Role) bool {
	switch r {
	case schema.RoleTokenBucket, schema.RoleCounterWindow, schema.RoleSlidingWindow, schema.RoleLock, schema.RoleQuota, schema.RoleBalance, schema.RoleBucket4j,
		schema.RoleReservation, schema.RoleConcurrencySet, schema.RoleBreakerHint, schema.RoleLeaderboard, schema.RoleBloom,
		schema.RoleCooldown, schema.RoleCounter, schema.RoleIdempotency, schema.RoleNonce, schema.RoleStats:
		return true
	}
	return false
}

// Decode reads key, of the family m names, as its role says, at time now.
// A key whose role has no decoder gives a zero Result (Role set, nothing
// else). Redis errors are returned; a value of the wrong shape is a Result
// with a Note.
func Decode(ctx context.Context, c redis.Cmdable, m schema.Match, key string, now time.Time) (Result, error) {
	return DecodeIn(ctx, c, Env{}, m, key, now)
}

// DecodeIn is Decode with the pack and database the key is in, which a
// concurrency set needs to link its members to their reservations.
func DecodeIn(ctx context.Context, c redis.Cmdable, env Env, m schema.Match, key string, now time.Time) (Result, error) {
	f := m.Family
	if f == nil {
		return Result{}, nil
	}
	res := Result{Role: f.Role}
	if f.Sensitive {
		res.Sensitive, res.Note = true, "sensitive: not decoded"
		return res, nil
	}
	var err error
	switch p := f.Params.(type) {
	case *schema.TokenBucketParams:
		var tb TokenBucket
		tb, err = ReadTokenBucket(ctx, c, key, p, now)
		if err == nil {
			res.TokenBucket = &tb
		}
	case *schema.CounterWindowParams:
		var cw CounterWindow
		cw, err = readCounterWindow(ctx, c, key, p)
		if err == nil {
			res.CounterWindow = &cw
		}
	case *schema.SlidingWindowParams:
		var sw SlidingWindow
		sw, err = readSlidingWindow(ctx, c, m, key, p, now)
		if err == nil {
			res.SlidingWindow = &sw
		}
	case *schema.LockParams:
		var l Lock
		l, err = readLock(ctx, c, key, p)
		if err == nil {
			res.Lock = &l
		}
	case *schema.QuotaParams:
		var q Quota
		q, err = readQuota(ctx, c, key, p, now)
		if err == nil {
			res.Quota = &q
		}
	case *schema.BalanceParams:
		var b Balance
		b, err = readBalance(ctx, c, key, p)
		if err == nil {
			res.Balance = &b
		}
	case *schema.ReservationParams:
		var r Reservation
		if r, err = readReservation(ctx, c, env, f, key, p); err == nil {
			res.Reservation = &r
		}
	case *schema.ConcurrencySetParams:
		var cs ConcurrencySet
		if cs, err = readConcurrencySet(ctx, c, env, key, p); err == nil {
			res.ConcurrencySet = &cs
		}
	case *schema.LeaderboardParams:
		var lb Leaderboard
		if lb, err = readLeaderboard(ctx, c, key, p); err == nil {
			res.Leaderboard = &lb
		}
	case *schema.BloomParams:
		var b Bloom
		if b, err = readBloom(ctx, c, m, key, p); err == nil {
			res.Bloom = &b
		}
	case *schema.CounterParams:
		var n Counter
		if n, err = readCounter(ctx, c, key, p); err == nil {
			res.Counter = &n
		}
	case *schema.StatsParams:
		var st Stats
		if st, err = readStats(ctx, c, key, p); err == nil {
			res.Stats = &st
		}
	}
	switch f.Role {
	case schema.RoleBreakerHint:
		var h BreakerHint
		if h, err = readBreakerHint(ctx, c, key); err == nil {
			res.BreakerHint = &h
		}
	case schema.RoleCooldown:
		var cd Cooldown
		if cd, err = readCooldown(ctx, c, key, now); err == nil {
			res.Cooldown = &cd
		}
	case schema.RoleIdempotency, schema.RoleNonce:
		var mk Marker
		if mk, err = readMarker(ctx, c, key, now); err == nil {
			res.Marker = &mk
		}
	}
	if f.Role == schema.RoleBucket4j {
		var b Bucket4j
		b, err = readBucket4j(ctx, c, key, now)
		if err == nil {
			res.Bucket4j = &b
		}
	}
	if errors.Is(err, ErrNotDecodable) {
		res.Note = strings.TrimPrefix(err.Error(), ErrNotDecodable.Error()+": ")
		return res, nil
	}
	return res, err
}

func notDecodable(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrNotDecodable, fmt.Sprintf(format, a...))
}

// number parses a finite float from an HMGET or GET reply.
func number(v any) (float64, bool) {
	s, ok := v.(string)
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil && !math.IsNaN(f) && !math.IsInf(f, 0)
}

// smallString GETs a string only after STRLEN says it is at most maxSmall
// bytes; ok is false when the key is absent.
func smallString(ctx context.Context, c redis.Cmdable, key string) (s string, ok bool, err error) {
	n, err := c.StrLen(ctx, key).Result()
	if err != nil {
		return "", false, err
	}
	if n > maxSmall {
		return "", false, notDecodable("the value is %d bytes, longer than this role's values (at most %d)", n, maxSmall)
	}
	s, err = c.Get(ctx, key).Result()
	if errors.Is(err, redis.Nil) {
		return "", false, nil
	}
	return s, err == nil, err
}

// ttl is the key's time to live; negative when it has none (-1) or is
// absent (-2), as go-redis passes PTTL's replies through.
func ttl(ctx context.Context, c redis.Cmdable, key string) (time.Duration, error) {
	return c.PTTL(ctx, key).Result()
}
