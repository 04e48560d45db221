package decode

import (
	"context"
	"encoding/json"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview/schema"
)

// MaxCheckedBody is the longest response body read to check that it is
// JSON; a longer one is measured, not read.
const MaxCheckedBody = 64 << 10

// ResponseCache is a cached response body: its size, how long it is
// still served, and whether a JSON body parses.
type ResponseCache struct {
	Bytes   int64
	TTL     time.Duration // negative: none, the body is served until evicted
	Content string        // the pack's: json or text
	Checked bool          // a JSON body at most MaxCheckedBody long was parsed
	Valid   bool          // Checked and it parses as JSON
}

func init() {
	register(schema.RoleResponseCache, nil, readResponseCache)
}

// readResponseCache reads the length and the TTL; then, for a JSON body of
// at most MaxCheckedBody bytes only, the body (a second phase: a longer
// body never crosses the wire, not even its first bytes).
func readResponseCache(ctx context.Context, pipe redis.Pipeliner, in *Input) finish {
	p, ok := in.Match.Family.Params.(*schema.ResponseCacheParams)
	if !ok {
		return func() (any, step, error) { return nil, nil, nil }
	}
	strlen := pipe.StrLen(ctx, in.Key)
	pttl := pipe.PTTL(ctx, in.Key)
	return func() (any, step, error) {
		if err := firstErr(strlen, pttl); err != nil {
			return done(nil, err)
		}
		if pttl.Val() == -2 {
			return done(nil, notDecodable("the key is gone"))
		}
		rc := &ResponseCache{Bytes: strlen.Val(), TTL: pttl.Val(), Content: p.Content}
		if p.Content != "json" || rc.Bytes > MaxCheckedBody {
			return done(rc, nil)
		}
		return rc, rc.checkBody(), nil
	}
}

// checkBody is the second phase: the body, which the first found at most
// MaxCheckedBody long, parsed as JSON (GETRANGE: should it have grown
// since, still no more than MaxCheckedBody+1 bytes are sent, and a cut body
// is not called checked).
func (rc *ResponseCache) checkBody() step {
	return func(ctx context.Context, pipe redis.Pipeliner, in *Input) finish {
		body := pipe.GetRange(ctx, in.Key, 0, MaxCheckedBody) // one byte more tells a grown body
		return func() (any, step, error) {
			if err := firstErr(body); err != nil {
				return done(nil, err)
			}
			if b := body.Val(); len(b) <= MaxCheckedBody {
				rc.Checked, rc.Valid = true, json.Valid([]byte(b))
			}
			return done(rc, nil)
		}
	}
}
