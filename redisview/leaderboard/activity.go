package leaderboard

import (
	"sync"
	"time"
)

// activityMinutes is how far back Activity remembers.
const activityMinutes = 60

// Activity counts a leaderboard's score changes per minute over the last
// hour, from successive reads of one window by Keydeck's poller. It sees
// only what the window shows: a write to a member outside the window read,
// or several writes to one member between two polls, count as one change at
// most, and a member that enters the window because another left it counts
// as new. It is a chart of visible activity, not a write counter. Safe for
// concurrent use.
type Activity struct {
	mu      sync.Mutex
	since   time.Time // the first read: counting starts there
	counts  [activityMinutes]int
	minutes [activityMinutes]int64 // the minute (Unix time / 60) each slot holds
}

// NewActivity returns an empty Activity.
func NewActivity() *Activity { return &Activity{} }

// Observe counts the members of cur that are new (absent from prev) or
// whose score changed, at time now. prev == nil means there is no earlier
// read (the poller's first): nothing is counted. Pass an empty, non-nil
// prev when the earlier read found the leaderboard empty.
func (a *Activity) Observe(prev, cur []Entry, now time.Time) {
	if prev == nil {
		a.Start(now)
		return
	}
	before := make(map[string]float64, len(prev))
	for _, e := range prev {
		before[e.Member] = e.Score
	}
	n := 0
	for _, e := range cur {
		if s, ok := before[e.Member]; !ok || s != e.Score {
			n++
		}
	}
	a.Add(n, now)
}

// Start marks when counting began (the first read); later calls keep
// the first mark.
func (a *Activity) Start(now time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.since.IsZero() {
		a.since = now
	}
}

// Since is when counting began: minutes before it were not watched, so
// they are unknown, not quiet. Zero before the first read.
func (a *Activity) Since() time.Time {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.since
}

// Add counts n changes at time now.
func (a *Activity) Add(n int, now time.Time) {
	if n <= 0 {
		return
	}
	m := activityMinute(now)
	i := activitySlot(m)
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.minutes[i] != m {
		if a.minutes[i] > m {
			return // older than the hour the slot now holds
		}
		a.minutes[i], a.counts[i] = m, 0
	}
	a.counts[i] += n
}

// PerMinute returns the changes in each of the 60 minutes up to now, oldest
// first, the current minute last.
func (a *Activity) PerMinute(now time.Time) []int {
	out := make([]int, activityMinutes)
	cur := activityMinute(now)
	a.mu.Lock()
	defer a.mu.Unlock()
	for k := range out {
		m := cur - activityMinutes + 1 + int64(k)
		if i := activitySlot(m); a.minutes[i] == m {
			out[k] = a.counts[i]
		}
	}
	return out
}

func activityMinute(t time.Time) int64 {
	s := t.Unix()
	if s < 0 {
		return (s - 59) / 60
	}
	return s / 60
}

func activitySlot(minute int64) int {
	i := int(minute % activityMinutes)
	if i < 0 {
		i += activityMinutes
	}
	return i
}
