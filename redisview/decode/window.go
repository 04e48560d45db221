package decode

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview/schema"
)

// CounterWindow is an INCR + EXPIRE fixed window: the count against the
// pack's limit; the window ends when the key expires.
type CounterWindow struct {
	Count    int64
	Limit    int64
	Window   time.Duration // 0 for a calendar window
	Calendar string        // "", day or month
	Zone     string
	ResetsIn time.Duration // the TTL; negative when the key has none
	Reached  bool
}

func readCounterWindow(ctx context.Context, c redis.Cmdable, key string, p *schema.CounterWindowParams) (CounterWindow, error) {
	s, ok, err := smallString(ctx, c, key)
	if err != nil {
		return CounterWindow{}, err
	}
	if !ok {
		return CounterWindow{}, notDecodable("the key is gone")
	}
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return CounterWindow{}, notDecodable("the value is not an integer count")
	}
	d, err := ttl(ctx, c, key)
	if err != nil {
		return CounterWindow{}, err
	}
	cw := CounterWindow{Count: n, Limit: p.Limit, Window: p.Window, Calendar: p.Calendar, Zone: p.Location().String(), ResetsIn: d, Reached: n >= p.Limit}
	if p.Calendar != "" {
		cw.Window = 0
	}
	return cw, nil
}

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

func readSlidingWindow(ctx context.Context, c redis.Cmdable, m schema.Match, key string, p *schema.SlidingWindowParams, now time.Time) (SlidingWindow, error) {
	unit := float64(time.Millisecond)
	if p.ScoreUnit == "s" {
		unit = float64(time.Second)
	}
	toScore := func(t time.Time) float64 { return float64(t.UnixNano()) / unit }
	toTime := func(s float64) time.Time { return time.Unix(0, int64(s*unit)).UTC() }
	min := "(" + strconv.FormatFloat(toScore(now.Add(-p.Window)), 'f', -1, 64)
	max := strconv.FormatFloat(toScore(now), 'f', -1, 64)
	sw := SlidingWindow{Limit: p.Limit, Window: p.Window}
	pipe := c.Pipeline()
	count := pipe.ZCount(ctx, key, min, max)
	card := pipe.ZCard(ctx, key)
	oldest := pipe.ZRangeByScoreWithScores(ctx, key, &redis.ZRangeBy{Min: min, Max: max, Count: 1})
	newest := pipe.ZRevRangeByScoreWithScores(ctx, key, &redis.ZRangeBy{Min: min, Max: max, Count: 1})
	var lock *redis.IntCmd
	if p.Lock != nil {
		if lk, err := p.Lock.Key(m.Map()); err == nil {
			sw.LockKey = lk
			lock = pipe.Exists(ctx, lk)
		}
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return SlidingWindow{}, err
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
	return sw, nil
}

// Lock is a SET NX lock: its value names the holder, or for an epoch-ms
// lock the time it unlocks.
type Lock struct {
	Holder   string    // the value as written
	Kind     string    // the pack's value kind: uuid, 1 or epoch-ms
	Until    time.Time // epoch-ms: the unlock time; zero otherwise
	TTL      time.Duration
	Expected bool // the value has the shape the pack says
}

func readLock(ctx context.Context, c redis.Cmdable, key string, p *schema.LockParams) (Lock, error) {
	s, ok, err := smallString(ctx, c, key)
	if err != nil {
		return Lock{}, err
	}
	if !ok {
		return Lock{}, notDecodable("the key is gone")
	}
	d, err := ttl(ctx, c, key)
	if err != nil {
		return Lock{}, err
	}
	l := Lock{Holder: s, Kind: p.Value, TTL: d}
	switch p.Value {
	case "epoch-ms":
		if ms, err := strconv.ParseInt(s, 10, 64); err == nil && ms > 0 {
			l.Until, l.Expected = time.UnixMilli(ms).UTC(), true
		}
	case "1":
		l.Expected = s == "1"
	case "uuid":
		l.Expected = isUUID(s)
	}
	return l, nil
}

func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, r := range s {
		switch i {
		case 8, 13, 18, 23:
			if r != '-' {
				return false
			}
		default:
			if !strings.ContainsRune("0123456789abcdefABCDEF", r) {
				return false
			}
		}
	}
	return true
}
