package format

import (
	"testing"
	"time"

	"github.com/keydeck/keydeck/redisview/level"
)

// A limit's level in a reset preview's words: the domain gives numbers,
// durations and times; only this writes them.
func TestLimitLevel(t *testing.T) {
	now := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		l    level.Limit
		want string
	}{
		{level.Limit{Count: 5, Counted: true, Limit: 5, Window: 10 * time.Minute}, "count 5, limit 5 per 10m (reached)"},
		{level.Limit{Limit: 30, Calendar: "day", Zone: "UTC"}, "limit 30 per day (UTC)"},
		{level.Limit{Count: 3, Counted: true, Entries: true, Limit: 5, Window: 5 * time.Minute}, "3 recorded, limit 5 per 5m"},
		{level.Limit{Capacity: 12, Refill: time.Minute, HasTokens: true, Tokens: 0.4, Requested: 1, Refused: true},
			"0 of 12 tokens left (a request takes 1: refused), capacity 12, refilled in 1m"},
		{level.Limit{Locked: true}, "locked"},
		{level.Limit{Locked: true, Until: now.Add(9 * time.Minute)}, "locked until 2026-01-01 10:09:00 UTC, in 9m"},
		{level.Limit{Locked: true, Until: now.Add(-time.Minute)}, "locked until 2026-01-01 09:59:00 UTC"},
		{level.Limit{}, ""},
	} {
		if got := LimitLevel(c.l, now); got != c.want {
			t.Errorf("%+v: %q, want %q", c.l, got, c.want)
		}
	}
}
