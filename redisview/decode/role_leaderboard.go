package decode

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview/schema"
)

// Leaderboard is a sorted set's size and first entry in the pack's order.
type Leaderboard struct {
	Card     int64
	Retained int    // the pack's pruning bound; 0: unbounded
	Order    string // desc or asc
	HasTop   bool
	Top      string
	TopScore float64
}

func init() {
	register(schema.RoleLeaderboard, nil, readLeaderboard)
}

// readLeaderboard reads the size and the first entry in the pack's order
// in one round trip (ZRANGE 0 0 of an empty set is empty).
func readLeaderboard(ctx context.Context, pipe redis.Pipeliner, in *Input) finish {
	p, ok := in.Match.Family.Params.(*schema.LeaderboardParams)
	if !ok {
		return func() (any, step, error) { return nil, nil, nil }
	}
	card := pipe.ZCard(ctx, in.Key)
	var top *redis.ZSliceCmd
	if p.Order == "asc" {
		top = pipe.ZRangeWithScores(ctx, in.Key, 0, 0)
	} else {
		top = pipe.ZRevRangeWithScores(ctx, in.Key, 0, 0)
	}
	return func() (any, step, error) {
		if err := firstErr(card); err != nil {
			return done(nil, err)
		}
		lb := &Leaderboard{Card: card.Val(), Retained: p.Retained, Order: p.Order}
		if lb.Card == 0 {
			return done(lb, nil)
		}
		z, err := top.Result()
		if err != nil {
			return done(nil, err)
		}
		if len(z) == 1 {
			m, _ := z[0].Member.(string)
			lb.HasTop, lb.Top, lb.TopScore = true, m, z[0].Score
		}
		return done(lb, nil)
	}
}
