// Package level is a limit's level as the domain reads it: plain
// numbers, durations and times, no text. The domain returns it (a reset
// preview's reading, decode.LimitLevel); only views/format writes it for
// people. It imports nothing of Keydeck's, so the views may take it.
package level

import "time"

// Limit is what is known of one limit key; zero fields are not known or
// do not apply.
type Limit struct {
	// Count is a counter's value or a window's entries (Entries);
	// Counted: it is known.
	Count   int64
	Counted bool
	Entries bool
	// Limit is the pack's limit (0: none), per Window or per calendar
	// Calendar in Zone.
	Limit    int64
	Window   time.Duration
	Calendar string
	Zone     string
	// A token bucket: its capacity, refilled from empty in Refill; the
	// tokens left now and a request's cost (HasTokens: they were read).
	Capacity  float64
	Refill    time.Duration
	HasTokens bool
	Tokens    float64
	Requested float64
	Refused   bool
	// Locked: a lock, until Until (zero: not known).
	Locked bool
	Until  time.Time
}

// Reached: the count is known and at or past the limit.
func (l Limit) Reached() bool { return l.Counted && l.Limit > 0 && l.Count >= l.Limit }
