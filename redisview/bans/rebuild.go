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
	"github.com/keydeck/keydeck/views/format"
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
var ErrTooLarge = fmt.Errorf("the bloom is larger than the %s Keydeck rebuilds in memory", format.Bytes(MaxBloomBytes))

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
	b := Built{Bitmap: make([]byte, size)}
	n, err := eachMember(ctx, c, l, func(m string) {
		for _, off := range l.Positions(m) {
			b.Bitmap[off/8] |= 0x80 >> (off % 8) // bit 0 is the first byte's highest, as SETBIT counts
		}
	})
	if err != nil {
		return Built{}, err
	}
	b.Members = n
	for _, x := range b.Bitmap {
		b.SetBits += int64(bits.OnesCount8(x))
	}
	return b, nil
}

// Needed says which of offsets (bits of l's bloom) some member of l's set
// other than except needs: by[i] is one member whose positions include
// offsets[i], or "" when none does. It reads the set as Build does (the
// same bound, SSCAN pages, refused when the set changed meanwhile), and
// keeps only the offsets' answers. Run on a connection that WATCHes the
// set (undo of set-bloom-bits does), a member added before EXEC makes
// EXEC fail.
func Needed(ctx context.Context, c redis.Cmdable, l List, offsets []int64, except string) (by []string, members int64, err error) {
	by = make([]string, len(offsets))
	idx := map[int64][]int{}
	for i, off := range offsets {
		idx[off] = append(idx[off], i)
	}
	members, err = eachMember(ctx, c, l, func(m string) {
		if m == except {
			return
		}
		for _, off := range l.Positions(m) {
			for _, i := range idx[off] {
				if by[i] == "" {
					by[i] = m
				}
			}
		}
	})
	if err != nil {
		return nil, 0, err
	}
	return by, members, nil
}

// eachMember calls fn with every member of l's set, read with SSCAN in
// pages of ScanCount, one page at a time, and returns SCARD. It refuses a
// bloom larger than MaxBloomBytes (ErrTooLarge), and a set whose SCARD
// changed during the scan (ErrSetChanged).
func eachMember(ctx context.Context, c redis.Cmdable, l List, fn func(string)) (int64, error) {
	if size := (l.Bits + 7) / 8; l.Bits <= 0 || size > MaxBloomBytes {
		return 0, ErrTooLarge
	}
	before, err := c.SCard(ctx, l.SetKey).Result()
	if err != nil {
		return 0, redisview.ReadError("SCARD", err)
	}
	var cursor uint64
	for {
		members, next, err := c.SScan(ctx, l.SetKey, cursor, "*", ScanCount).Result()
		if err != nil {
			return 0, redisview.ReadError("SSCAN", err)
		}
		for _, m := range members {
			fn(m)
		}
		if cursor = next; cursor == 0 {
			break
		}
	}
	after, err := c.SCard(ctx, l.SetKey).Result()
	if err != nil {
		return 0, redisview.ReadError("SCARD", err)
	}
	if after != before {
		return 0, fmt.Errorf("%w: %q went from %d to %d members; try again", ErrSetChanged, l.SetKey, before, after)
	}
	return after, nil
}
