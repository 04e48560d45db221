package bans

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/bits"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview"
)

// Built is a bloom rebuilt in memory from its set: nothing is written
// until the rebuild-bloom action swaps it in.
type Built struct {
	Bitmap  []byte // the whole bloom, as GET would return it
	Members int64  // SCARD before and after the scan (equal)
	SetBits int64
}

// Digest names the bitmap (hex SHA-256): the confirmation of a rebuild
// carries the previewed one, and the bitmap computed again at execution
// must equal it.
func (b Built) Digest() string {
	sum := sha256.Sum256(b.Bitmap)
	return hex.EncodeToString(sum[:])
}

// ErrSetChanged: members came or went while the set was being read.
var ErrSetChanged = errors.New("the set changed during the rebuild")

// ErrTooLarge: the configured bloom is larger than Keydeck builds in memory.
var ErrTooLarge = fmt.Errorf("the bloom is larger than the %s Keydeck rebuilds in memory", redisview.FormatBytes(MaxBloomBytes))

// Build computes, in memory, the bloom the set's members make with the
// pinned scheme: the whole bitmap at the configured size (the application
// allocates it whole: 1,000,003 bits are 125 KB), every member's
// positions set. The set is read with SSCAN in pages of ScanCount, one
// page at a time; only the bitmap is kept. It refuses when the set's
// SCARD changed during the scan. It writes nothing.
//
// Run on a connection that WATCHes the set (the rebuild-bloom action
// does), no member can come or go between the scan and the EXEC that
// writes the bitmap without that EXEC failing.
func Build(ctx context.Context, c redis.Cmdable, l List) (Built, error) {
	size := (l.Bits + 7) / 8
	if l.Bits <= 0 || size > MaxBloomBytes {
		return Built{}, ErrTooLarge
	}
	before, err := c.SCard(ctx, l.SetKey).Result()
	if err != nil {
		return Built{}, redisview.ReadError("SCARD", err)
	}
	b := Built{Bitmap: make([]byte, size)}
	var cursor uint64
	for {
		members, next, err := c.SScan(ctx, l.SetKey, cursor, "*", ScanCount).Result()
		if err != nil {
			return Built{}, redisview.ReadError("SSCAN", err)
		}
		for _, m := range members {
			for _, off := range l.Positions(m) {
				b.Bitmap[off/8] |= 0x80 >> (off % 8) // bit 0 is the first byte's highest, as SETBIT counts
			}
		}
		if cursor = next; cursor == 0 {
			break
		}
	}
	after, err := c.SCard(ctx, l.SetKey).Result()
	if err != nil {
		return Built{}, redisview.ReadError("SCARD", err)
	}
	if after != before {
		return Built{}, fmt.Errorf("%w: %q went from %d to %d members; try again", ErrSetChanged, l.SetKey, before, after)
	}
	b.Members = after
	for _, x := range b.Bitmap {
		b.SetBits += int64(bits.OnesCount8(x))
	}
	return b, nil
}
