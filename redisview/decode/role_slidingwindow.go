package decode

import (
	"context"
	"strconv"
	"strings"
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
	registerRow(schema.RoleSlidingWindow, readSlidingRow, nil)
	registerReset(schema.RoleSlidingWindow, Reset{Level: func(f *schema.Family, r ResetRead) (LimitLevel, Verdict) {
		l := LimitLevel{Entries: true}
		if p, ok := f.Params.(*schema.SlidingWindowParams); ok {
			l.Limit, l.Window = p.Limit, p.Window
		}
		if r.Size >= 0 {
			l.Count, l.Counted = r.Size, true
		}
		return l, verdictOf(l)
	}})
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

// SlidingRow is a sliding window as the limits sweep read it: its events
// within the window at the read, and the lock it sets.
type SlidingRow struct {
	InWindow, Total int64
	LockKey         string // "" when the pack names no lock in this database
	Locked          bool   // the lock was present
	LockValue       string // its value (never of a sensitive lock family)
	LockPTTL        time.Duration
}

// lockBytes is how much of a sliding window's lock value is read: an
// epoch in milliseconds.
const lockBytes = 32

// readSlidingRow counts the window's events (ZCOUNT, ZCARD) and reads its
// lock's TTL and value.
func readSlidingRow(ctx context.Context, pipe redis.Pipeliner, in *Input) func() (RowState, error) {
	p, ok := in.Match.Family.Params.(*schema.SlidingWindowParams)
	if !ok {
		return func() (RowState, error) { return nil, notDecodable("not a sliding window") }
	}
	unit := float64(time.Millisecond)
	if p.ScoreUnit == "s" {
		unit = float64(time.Second)
	}
	lo := "(" + strconv.FormatFloat(float64(in.Now.Add(-p.Window).UnixNano())/unit, 'f', -1, 64)
	hi := strconv.FormatFloat(float64(in.Now.UnixNano())/unit, 'f', -1, 64)
	count, card := pipe.ZCount(ctx, in.Key, lo, hi), pipe.ZCard(ctx, in.Key)
	var row SlidingRow
	var lockVal *redis.StringCmd
	var lockTTL *redis.DurationCmd
	if p.Lock != nil && p.Lock.Family != nil && p.Lock.Family.InDB(in.Env.DB) {
		if lk, err := p.Lock.Key(in.Match.Map()); err == nil {
			row.LockKey = lk
			if !p.Lock.Family.Sensitive {
				lockVal = pipe.GetRange(ctx, lk, 0, lockBytes-1)
			}
			lockTTL = pipe.PTTL(ctx, lk)
		}
	}
	return func() (RowState, error) {
		if err := firstErr(count, card); err != nil {
			return nil, err
		}
		row.InWindow, row.Total = count.Val(), card.Val()
		if lockTTL != nil && lockTTL.Err() == nil && lockTTL.Val() != -2 {
			row.Locked, row.LockPTTL = true, max(-1, lockTTL.Val())
			if lockVal != nil && lockVal.Err() == nil {
				row.LockValue = lockVal.Val()
			}
		}
		return row, nil
	}
}

// At is the window at s.Now: its events as read against the limit, and
// its lock while the lock's TTL runs.
func (w SlidingRow) At(s Since) Moment {
	m := Moment{Gone: s.Gone()}
	p, ok := s.Family.Params.(*schema.SlidingWindowParams)
	if !ok {
		return m
	}
	m.Count, m.Limit, m.Used = w.InWindow, float64(p.Limit), float64(w.InWindow)
	m.Throttled = w.InWindow >= p.Limit
	if w.Locked && !(w.LockPTTL > 0 && s.Elapsed() >= w.LockPTTL) {
		m.Locked, m.Throttled = true, true
		if ms, err := strconv.ParseInt(strings.TrimSpace(w.LockValue), 10, 64); err == nil && ms > 0 {
			m.Until = time.UnixMilli(ms).UTC()
		}
		if w.LockPTTL > 0 {
			m.ResetsIn = s.Left(w.LockPTTL)
		}
	}
	return m
}
