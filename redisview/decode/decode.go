// Package decode reads what a key means by its family's role, from the
// pack's parameters: a token bucket's tokens now, a fixed window's count
// against its limit, a sliding window's events, a lock's holder. Each role
// registers its reader in its own file (role_*.go); a reader queues its
// commands on a pipeline and builds its state from the replies, so any
// number of keys of any roles are read in one round trip (ReadMany).
// Every read is bounded (HMGET of named fields, GETRANGE of a string whose
// STRLEN is checked, ZCOUNT and ZRANGE with LIMIT), and a sensitive family
// is never read at all.
package decode

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
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

// Result is what a key means. State is the role's state (a *TokenBucket,
// a *Lock …) when the key was decoded; Sensitive when it was not read
// because its family is sensitive; Note says why nothing was decoded
// otherwise.
type Result struct {
	Role      schema.Role
	Sensitive bool
	Note      string
	State     any
}

// As is r's state when it is a *T, else nil.
func As[T any](r Result) *T {
	s, _ := r.State.(*T)
	return s
}

// Env is what a decode needs beyond the key's own family: the pack the
// family belongs to (to find a companion family, such as the reservation
// a concurrency set's member names) and the database the key is in.
type Env struct {
	Pack *schema.Pack
	DB   int
}

// Decode reads key, of the family m names, as its role says, at time now.
// A key whose role has no decoder gives a zero Result (Role set, nothing
// else). Redis errors are returned; a value of the wrong shape is a Result
// with a Note.
func Decode(ctx context.Context, c redis.Cmdable, m schema.Match, key string, now time.Time) (Result, error) {
	return DecodeIn(ctx, c, Env{}, m, key, now)
}

// DecodeIn is Decode with the pack and database the key is in, which a
// concurrency set needs to link its members to their reservations: one
// key read by ReadMany.
func DecodeIn(ctx context.Context, c redis.Cmdable, env Env, m schema.Match, key string, now time.Time) (Result, error) {
	if m.Family == nil {
		return Result{}, nil
	}
	d := ReadMany(ctx, c, env, []Item{{Match: m, Key: key}}, now)[0]
	return d.Result, d.Err
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

// small is a string value read with its length and TTL in one round trip:
// GETRANGE of at most maxSmall bytes, so a long value is never sent whole.
type small struct {
	strlen *redis.IntCmd
	value  *redis.StringCmd
	pttl   *redis.DurationCmd
}

func queueSmall(ctx context.Context, p redis.Pipeliner, key string) small {
	return small{strlen: p.StrLen(ctx, key), value: p.GetRange(ctx, key, 0, maxSmall-1), pttl: p.PTTL(ctx, key)}
}

// get is the value and TTL (negative: none); a value longer than maxSmall
// or a key that is gone is ErrNotDecodable.
func (s small) get() (string, time.Duration, error) {
	if err := firstErr(s.strlen); err != nil {
		return "", 0, err
	}
	if n := s.strlen.Val(); n > maxSmall {
		return "", 0, notDecodable("the value is %d bytes, longer than this role's values (at most %d)", n, maxSmall)
	}
	if err := firstErr(s.value, s.pttl); err != nil {
		return "", 0, err
	}
	if s.pttl.Val() == -2 { // go-redis passes PTTL's -2 (no such key) through
		return "", 0, notDecodable("the key is gone")
	}
	return s.value.Val(), s.pttl.Val(), nil
}
