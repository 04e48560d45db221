package value

import (
	"context"
	"errors"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview"
)

// Member is what Lookup found of one sorted-set member.
type Member struct {
	// Withheld: the key's family is sensitive; nothing was read.
	Withheld bool
	Found    bool
	Score    float64
	// Rank is ZRANK's (0 is the lowest score); At is the offset of the
	// rank page that holds it.
	Rank int64
	At   string
}

// Lookup finds one exact member of a sorted set: ZSCORE and ZRANK in one
// round trip, each O(log N).
func Lookup(ctx context.Context, conn *redisview.Conn, db int, key, member string) (Member, error) {
	if conn.Sensitive(db, key) {
		return Member{Withheld: true}, nil
	}
	c := conn.DB(db)
	var score *redis.FloatCmd
	var rank *redis.IntCmd
	_, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		score = p.ZScore(ctx, key, member)
		rank = p.ZRank(ctx, key, member)
		return nil
	})
	if redisview.IsConnErr(err) {
		return Member{}, conn.WrapErr(redisview.ReadError("looking a member up", err))
	}
	for _, e := range []error{score.Err(), rank.Err()} {
		if e != nil && !errors.Is(e, redis.Nil) {
			return Member{}, conn.WrapErr(redisview.ReadError("looking a member up", e))
		}
	}
	if score.Err() != nil || rank.Err() != nil {
		return Member{}, nil
	}
	r := rank.Val()
	return Member{Found: true, Score: score.Val(), Rank: r, At: strconv.FormatInt(r/PageSize*PageSize, 10)}, nil
}
