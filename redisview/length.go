package redisview

import (
	"context"
	"strings"

	"github.com/redis/go-redis/v9"
)

// LengthCmd queues the O(1) length command of a key of Redis type t
// (STRLEN, HLEN, LLEN, SCARD, ZCARD, XLEN), or nothing (nil) for a type
// without one.
func LengthCmd(ctx context.Context, p redis.Pipeliner, t, key string) *redis.IntCmd {
	switch strings.ToLower(t) {
	case "string":
		return p.StrLen(ctx, key)
	case "hash":
		return p.HLen(ctx, key)
	case "list":
		return p.LLen(ctx, key)
	case "set":
		return p.SCard(ctx, key)
	case "zset":
		return p.ZCard(ctx, key)
	case "stream":
		return p.XLen(ctx, key)
	}
	return nil
}
