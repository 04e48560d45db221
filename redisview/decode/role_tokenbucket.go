package decode

import (
	"context"
	"math"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview/schema"
)

// TokenBucket is a token bucket as the application would see it at Now:
// the stored tokens refilled by the pack's rate since the last refill.
type TokenBucket struct {
	Now        time.Time
	Stored     float64   // tokens as written
	Tokens     float64   // refilled to Now, between 0 and Capacity
	Capacity   float64   // from the pack
	RefillPerS float64   // tokens a second, from the pack
	Requested  float64   // tokens one request takes
	LastRefill time.Time // zero when the time field is missing or not a number
	ToFull     time.Duration
	Refused    bool          // a request now is refused: Tokens < Requested
	RetryAfter time.Duration // when Refused: until enough tokens are back
}

// TokensNow is min(capacity, tokens + (now − last) × refill_per_ms), never
// below 0; a last refill in the future (clock skew) adds nothing. lastMs is
// the time field in epoch milliseconds; hasLast false when it is unknown.
func TokensNow(p *schema.TokenBucketParams, tokens, lastMs float64, hasLast bool, now time.Time) float64 {
	if hasLast && p.RefillPerMs > 0 {
		if elapsed := float64(now.UnixMilli()) - lastMs; elapsed > 0 {
			tokens += elapsed * p.RefillPerMs
		}
	}
	return math.Max(0, math.Min(p.Capacity, tokens))
}

func init() {
	register(schema.RoleTokenBucket, paramsClass[*schema.TokenBucketParams](ClassLimit), func(ctx context.Context, p redis.Pipeliner, in *Input) finish {
		tp, ok := in.Match.Family.Params.(*schema.TokenBucketParams)
		if !ok {
			return func() (any, step, error) { return nil, nil, nil }
		}
		hm := p.HMGet(ctx, in.Key, tp.TokensField, tp.TimeField)
		return func() (any, step, error) {
			tb, err := tokenBucket(hm, tp, in.Now)
			return done(&tb, err)
		}
	})
	registerRow(schema.RoleTokenBucket, readBucketRow, nil)
	registerReset(schema.RoleTokenBucket, Reset{
		Read: func(ctx context.Context, c redis.Cmdable, key string, f *schema.Family, now time.Time) any {
			p, ok := f.Params.(*schema.TokenBucketParams)
			if !ok || f.Sensitive {
				return nil
			}
			b, err := ReadTokenBucket(ctx, c, key, p, now)
			if err != nil {
				return nil
			}
			return &b
		},
		Level: func(f *schema.Family, r ResetRead) (LimitLevel, Verdict) {
			var l LimitLevel
			if p, ok := f.Params.(*schema.TokenBucketParams); ok {
				l.Capacity, l.Refill = p.Capacity, p.Window
			}
			b, ok := r.Extra.(*TokenBucket)
			if !ok {
				return l, Unknown
			}
			l.HasTokens, l.Tokens, l.Requested, l.Refused = true, b.Tokens, b.Requested, b.Refused
			if b.Refused {
				return l, Reached
			}
			return l, NotReached
		},
	})
}

// BucketRow is a token bucket as the limits sweep read it: its stored
// fields, refilled by the pack's rate at every At.
type BucketRow struct {
	Stored  float64 // tokens as written
	LastMs  float64 // the time field, in epoch milliseconds
	HasLast bool    // the time field is a number
}

// readBucketRow reads a bucket's two fields with one HMGET.
func readBucketRow(ctx context.Context, p redis.Pipeliner, in *Input) func() (RowState, error) {
	tp, ok := in.Match.Family.Params.(*schema.TokenBucketParams)
	if !ok {
		return func() (RowState, error) { return nil, notDecodable("not a token bucket") }
	}
	hm := p.HMGet(ctx, in.Key, tp.TokensField, tp.TimeField)
	return func() (RowState, error) {
		if err := firstErr(hm); err != nil {
			return nil, err
		}
		v := hm.Val()
		if len(v) != 2 {
			return nil, notDecodable("not a token bucket")
		}
		var b BucketRow
		var ok bool
		if b.Stored, ok = rowNumber(v[0]); !ok {
			return nil, notDecodable("field %s is missing or not a number", tp.TokensField)
		}
		b.LastMs, b.HasLast = rowNumber(v[1])
		if b.HasLast && tp.TimeUnit == "s" {
			b.LastMs *= 1000
		}
		return b, nil
	}
}

// At is the bucket refilled to s.Now; an expired bucket is a full one.
func (b BucketRow) At(s Since) Moment {
	m := Moment{Gone: s.Gone()}
	p, ok := s.Family.Params.(*schema.TokenBucketParams)
	if !ok {
		return m
	}
	m.Tokens = TokensNow(p, b.Stored, b.LastMs, b.HasLast, s.Now)
	m.Limit, m.Used = p.Capacity, p.Capacity-m.Tokens
	m.Throttled = m.Tokens < p.Requested
	if p.RefillPerMs > 0 {
		need := p.Capacity - m.Tokens
		if m.Throttled {
			need = p.Requested - m.Tokens
		}
		m.ResetsIn = time.Duration(math.Ceil(need/p.RefillPerMs)) * time.Millisecond
	}
	if m.Gone {
		m.Tokens, m.Used, m.Throttled, m.ResetsIn = p.Capacity, 0, false, 0
	}
	return m
}

// ReadTokenBucket reads a bucket's two fields with one HMGET and refills
// them to now. A missing or non-numeric tokens field is ErrNotDecodable.
func ReadTokenBucket(ctx context.Context, c redis.Cmdable, key string, p *schema.TokenBucketParams, now time.Time) (TokenBucket, error) {
	return tokenBucket(c.HMGet(ctx, key, p.TokensField, p.TimeField), p, now)
}

func tokenBucket(hm *redis.SliceCmd, p *schema.TokenBucketParams, now time.Time) (TokenBucket, error) {
	vals, err := hm.Result()
	if err != nil {
		return TokenBucket{}, err
	}
	if len(vals) != 2 {
		return TokenBucket{}, notDecodable("HMGET gave %d values", len(vals))
	}
	stored, ok := number(vals[0])
	if !ok {
		return TokenBucket{}, notDecodable("field %q is missing or not a number", p.TokensField)
	}
	tb := TokenBucket{Now: now, Stored: stored, Capacity: p.Capacity, RefillPerS: p.RefillPerMs * 1000, Requested: p.Requested}
	last, hasLast := number(vals[1])
	if hasLast {
		if p.TimeUnit == "s" {
			last *= 1000
		}
		tb.LastRefill = time.UnixMilli(int64(last)).UTC()
	}
	tb.Tokens = TokensNow(p, stored, last, hasLast, now)
	if p.RefillPerMs > 0 {
		tb.ToFull = msDuration((p.Capacity - tb.Tokens) / p.RefillPerMs)
	}
	if tb.Tokens < p.Requested {
		tb.Refused = true
		if p.RefillPerMs > 0 {
			tb.RetryAfter = msDuration((p.Requested - tb.Tokens) / p.RefillPerMs)
		}
	}
	return tb, nil
}

// msDuration rounds a positive number of milliseconds up to a whole one.
func msDuration(ms float64) time.Duration {
	if ms <= 0 {
		return 0
	}
	return time.Duration(math.Ceil(ms)) * time.Millisecond
}
