package decode

import (
	"context"
	"math"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview/schema"
)

// Bloom bounds: the longest bitmap whose set bits are counted, and the
// byte range one BITCOUNT covers (BITCOUNT is O(N): a 512 KiB range takes
// a few hundred µs, so no one command nears 2 ms however long the bitmap).
const MaxBloomBytes = 64 << 20

var bitcountChunk int64 = 512 << 10 // a var so a test can cross chunk boundaries

// Bloom is a bitmap bloom filter's fill.
type Bloom struct {
	Bytes      int64 // STRLEN
	Bits       int64 // Bytes × 8
	Configured int64 // the pack's bit count
	Hashes     int
	Counted    bool  // set bits were counted (the bitmap is at most MaxBloomBytes)
	SetBits    int64 // BITCOUNT within the configured bits
	Fill       float64
	// FalsePositive is the chance that an item never added reads as
	// present: (set / bits)^hashes.
	FalsePositive float64
	MembersKey    string // the pack's exact set, if it links one
	HasMembers    bool   // MembersKey was read
	Members       int64  // its SCARD
}

func init() {
	register(schema.RoleBloom, nil, readBloom)
}

// readBloom reads the bitmap's length and the exact set's size, then, in
// a second phase, counts the set bits in chunks of bitcountChunk bytes.
func readBloom(ctx context.Context, pipe redis.Pipeliner, in *Input) finish {
	p, ok := in.Match.Family.Params.(*schema.BloomParams)
	if !ok {
		return func() (any, step, error) { return nil, nil, nil }
	}
	b := &Bloom{Configured: p.Bits, Hashes: p.Hashes}
	if p.Members != nil {
		if k, err := p.Members.Key(in.Match.Map()); err == nil {
			b.MembersKey = k
		}
	}
	strlen := pipe.StrLen(ctx, in.Key)
	var card *redis.IntCmd
	if b.MembersKey != "" {
		card = pipe.SCard(ctx, b.MembersKey)
	}
	return func() (any, step, error) {
		if err := firstErr(strlen, card); err != nil {
			return done(nil, err)
		}
		n := strlen.Val()
		b.Bytes, b.Bits = n, n*8
		if card != nil {
			b.HasMembers, b.Members = true, card.Val()
		}
		if n > MaxBloomBytes || n == 0 {
			b.Counted = n == 0
			return done(b.fill(p), nil)
		}
		b.Counted = true
		return b, b.queueCounts(p, n), nil
	}
}

// queueCounts is the second phase: BITCOUNT of each chunk of the bitmap.
func (b *Bloom) queueCounts(p *schema.BloomParams, n int64) step {
	return func(ctx context.Context, pipe redis.Pipeliner, in *Input) finish {
		var counts []*redis.IntCmd
		for start := int64(0); start < n; start += bitcountChunk {
			end := min(start+bitcountChunk, n) - 1
			counts = append(counts, pipe.BitCount(ctx, in.Key, &redis.BitCount{Start: start, End: end}))
		}
		return func() (any, step, error) {
			for _, c := range counts {
				if err := firstErr(c); err != nil {
					return done(nil, err)
				}
				b.SetBits += c.Val()
			}
			return done(b.fill(p), nil)
		}
	}
}

// fill computes the fill and false-positive rate from the set bits: the
// application's positions are below the configured bit count, and a
// shorter string reads as zeros beyond its end, so the fraction is always
// of the configured bits.
func (b *Bloom) fill(p *schema.BloomParams) *Bloom {
	if b.Counted {
		b.Fill = float64(b.SetBits) / float64(p.Bits)
		b.FalsePositive = math.Pow(b.Fill, float64(p.Hashes))
	}
	return b
}
