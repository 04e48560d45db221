package decode

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview/schema"
)

// SlidingWindow is a ZSET of event times: the events inside the window
// ending now, against the pack's limit, and the lock it sets when exceeded.
type SlidingWindow struct {
	InWindow       int64 // events scored within (now − window, now]
	Total          int64 // every member, stale ones included
	Limit          int64
	Window         time.Duration
	Oldest, Newest time.Time // of the events in the window; zero when none
	Reached        bool
	LockKey        string // the companion lock, "" when the pack names none
	Locked         bool   // LockKey exists
}

func init() {
	register(schema.RoleSlidingWindow, paramsClass[*schema.SlidingWindowParams](ClassLimit), readSlidingWindow)
}

func readSlidingWindow(ctx context.Context, pipe redis.Pipeliner, in *Input) finish {
	p, ok := in.Match.Family.Params.(*schema.SlidingWindowParams)
	if !ok {
		return func() (any, step, error) { return nil, nil, nil }
	}
	unit := float64(time.Millisecond)
	if p.ScoreUnit == "s" {
		unit = float64(time.Second)
	}
	toScore := func(t time.Time) float64 { return float64(t.UnixNano()) / unit }
	toTime := func(s float64) time.Time { return time.Unix(0, int64(s*unit)).UTC() }
	min := "(" + strconv.FormatFloat(toScore(in.Now.Add(-p.Window)), 'f', -1, 64)
	max := strconv.FormatFloat(toScore(in.Now), 'f', -1, 64)
	sw := SlidingWindow{Limit: p.Limit, Window: p.Window}
	count := pipe.ZCount(ctx, in.Key, min, max)
	card := pipe.ZCard(ctx, in.Key)
	oldest := pipe.ZRangeByScoreWithScores(ctx, in.Key, &redis.ZRangeBy{Min: min, Max: max, Count: 1})
	newest := pipe.ZRevRangeByScoreWithScores(ctx, in.Key, &redis.ZRangeBy{Min: min, Max: max, Count: 1})
	var lock *redis.IntCmd
	if p.Lock != nil {
		if lk, err := p.Lock.Key(in.Match.Map()); err == nil {
			sw.LockKey = lk
			lock = pipe.Exists(ctx, lk)
		}
	}
	return func() (any, step, error) {
		if err := firstErr(count, card, oldest, newest, lock); err != nil {
			return done(nil, err)
		}
		sw.InWindow, sw.Total = count.Val(), card.Val()
		if z := oldest.Val(); len(z) == 1 {
			sw.Oldest = toTime(z[0].Score)
		}
		if z := newest.Val(); len(z) == 1 {
			sw.Newest = toTime(z[0].Score)
		}
		sw.Reached = sw.InWindow >= p.Limit
		if lock != nil {
			sw.Locked = lock.Val() > 0
		}
		return done(&sw, nil)
	}
}
