package bans

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview"
)

// AsideSuffix names the key a rebuilt bloom is built in, beside the live
// one: "<bloom>:keydeck-rebuild". One per bloom, so an abandoned build is
// overwritten by the next, never piled up.
const AsideSuffix = ":keydeck-rebuild"

// AsideKey is where l's bloom is rebuilt.
func (l List) AsideKey() string { return l.BloomKey + AsideSuffix }

// IsAside reports whether key is the rebuild key of bloom.
func IsAside(bloom, key string) bool { return key == bloom+AsideSuffix }

// Built is a bloom rebuilt aside from the set.
type Built struct {
	Key     string
	Members int64 // SCARD before and after the build (equal)
	SetBits int64
}

// BuildAside writes, in l.AsideKey(), the bloom the set's members make
// with the pinned scheme: the whole bitmap allocated at the configured
// size, then SETBIT of every member's positions, one pipeline per SSCAN
// page (each command O(1)). It refuses when the set changed during the
// build (SCARD before and after differ). Swapping it in is the
// rebuild-bloom action (RENAME, audited, undoable); the aside key is
// not the application's and nothing reads it.
func BuildAside(ctx context.Context, c redis.Cmdable, l List) (Built, error) {
	aside := l.AsideKey()
	before, err := c.SCard(ctx, l.SetKey).Result()
	if err != nil {
		return Built{}, redisview.ReadError("SCARD", err)
	}
	pipe := c.Pipeline()
	pipe.Del(ctx, aside)
	pipe.SetBit(ctx, aside, l.Bits-1, 0) // allocate the whole bitmap, as the application does
	if _, err := pipe.Exec(ctx); err != nil {
		return Built{}, redisview.ReadError("allocating "+aside, err)
	}
	var cursor uint64
	for {
		members, next, err := c.SScan(ctx, l.SetKey, cursor, "*", ScanCount).Result()
		if err != nil {
			return Built{}, redisview.ReadError("SSCAN", err)
		}
		if len(members) > 0 {
			pipe := c.Pipeline()
			for _, m := range members {
				for _, off := range l.Positions(m) {
					pipe.SetBit(ctx, aside, off, 1)
				}
			}
			if _, err := pipe.Exec(ctx); err != nil {
				return Built{}, redisview.ReadError("SETBIT", err)
			}
		}
		cursor = next
		if cursor == 0 {
			break
		}
	}
	after, err := c.SCard(ctx, l.SetKey).Result()
	if err != nil {
		return Built{}, redisview.ReadError("SCARD", err)
	}
	if after != before {
		c.Del(ctx, aside)
		return Built{}, fmt.Errorf("the set %q went from %d to %d members during the rebuild; try again", l.SetKey, before, after)
	}
	b := Built{Key: aside, Members: after}
	h, err := ReadHealth(ctx, c, List{BloomKey: aside, SetKey: l.SetKey, Bits: l.Bits, Hashes: l.Hashes})
	if err != nil {
		return Built{}, err
	}
	b.SetBits = h.SetBits
	return b, nil
}
