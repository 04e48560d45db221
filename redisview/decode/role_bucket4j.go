package decode

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview/schema"
)

func init() {
	register(schema.RoleBucket4j, always(ClassLimit), readBucket4j)
	registerRow(schema.RoleBucket4j, readBucket4jRow, nil)
	// The preview does not decode the state: the next request starts a
	// new bucket.
	registerReset(schema.RoleBucket4j, Reset{Present: "a Bucket4j bucket: the next request starts a new one with its bandwidths' initial tokens", Refuses: Unknown})
}

// readBucket4j reads the state with its length (GETRANGE of at most
// maxBucket4j bytes: a longer value is not read); an unknown layout is
// ErrNotDecodable, saying only the length.
func readBucket4j(ctx context.Context, p redis.Pipeliner, in *Input) finish {
	strlen := p.StrLen(ctx, in.Key)
	val := p.GetRange(ctx, in.Key, 0, maxBucket4j-1)
	pttl := p.PTTL(ctx, in.Key)
	return func() (any, step, error) {
		if err := firstErr(strlen); err != nil {
			return done(nil, err)
		}
		if n := strlen.Val(); n > maxBucket4j {
			return done(nil, notDecodable("unrecognised state (%d bytes)", n))
		}
		if err := firstErr(val, pttl); err != nil {
			return done(nil, err)
		}
		if pttl.Val() == -2 {
			return done(nil, notDecodable("the key is gone"))
		}
		s := val.Val()
		b, err := DecodeBucket4j([]byte(s), in.Now)
		if err != nil {
			return done(nil, notDecodable("unrecognised state (%d bytes)", len(s)))
		}
		b.TTL = pttl.Val()
		return done(&b, nil)
	}
}

// stateBytes bounds a Bucket4j state a row reads: a few bandwidths take
// ~100 bytes; a longer value is not read.
const stateBytes = 4096

// Bucket4jRow is a Bucket4j state as the limits sweep read it: its bytes,
// decoded and refilled at every At.
type Bucket4jRow struct{ State []byte }

// readBucket4jRow reads at most stateBytes of the state, with its length.
func readBucket4jRow(ctx context.Context, p redis.Pipeliner, in *Input) func() (RowState, error) {
	val := p.GetRange(ctx, in.Key, 0, stateBytes-1)
	strlen := p.StrLen(ctx, in.Key)
	return func() (RowState, error) {
		if err := firstErr(val); err != nil {
			return nil, err
		}
		if strlen.Val() > stateBytes {
			return nil, notDecodable("the state is longer than 4 KiB: not read")
		}
		b := Bucket4jRow{State: []byte(val.Val())}
		if _, err := DecodeBucket4j(b.State, in.Now); err != nil {
			return nil, notDecodable("not a Bucket4j state: %v", err)
		}
		return b, nil
	}
}

// At is the state decoded and refilled at s.Now: its limiting bandwidth,
// the one with the fewest tokens left.
func (r Bucket4jRow) At(s Since) Moment {
	m := Moment{Gone: s.Gone()}
	b, err := DecodeBucket4j(r.State, s.Now)
	if err != nil || len(b.Bandwidths) == 0 {
		return m
	}
	lim := b.Bandwidths[0]
	for _, bw := range b.Bandwidths[1:] {
		if bw.Tokens < lim.Tokens {
			lim = bw
		}
	}
	m.Tokens, m.Limit = float64(b.Tokens), float64(lim.Capacity)
	m.Used = m.Limit - max(0, m.Tokens)
	m.Throttled = b.Tokens < 1
	m.ResetsIn = b.ToFull
	return m
}
