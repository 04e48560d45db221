package redisview

import (
	"sync"
	"time"

	"github.com/keydeck/keydeck/internal/clock"
)

// Keydeck's own command latency.
//
// The own-traffic hook times each round trip Keydeck makes (a command, or
// a pipeline as a whole: its commands share one round trip), from the
// moment it is handed to the client until its reply is in, so the time
// includes the network and a wait for a pooled connection. The times go
// into a histogram of fixed buckets per slot of ownLatSlot; the readings
// cover the last ownLatSlots slots. Memory is fixed whatever the traffic,
// and nothing is labelled by key or command.

// ownLatBounds are the buckets' upper bounds; one more bucket holds what
// is slower than the last.
var ownLatBounds = []time.Duration{
	100 * time.Microsecond, 250 * time.Microsecond, 500 * time.Microsecond,
	time.Millisecond, 2500 * time.Microsecond, 5 * time.Millisecond,
	10 * time.Millisecond, 25 * time.Millisecond, 50 * time.Millisecond,
	100 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond,
	time.Second, 2500 * time.Millisecond, 5 * time.Second,
}

const (
	ownLatSlot  = 10 * time.Second
	ownLatSlots = 6 // the window: one minute
)

// OwnLatency is Keydeck's round trips to one server over a recent window.
// A percentile is the upper bound of the bucket it falls in (a round trip
// slower than the last bound reads as Max); Max is exact.
type OwnLatency struct {
	Window             time.Duration
	Count              int64
	P50, P90, P99, Max time.Duration
	// Over: the percentile is above the last bucket's bound, so it is
	// known only to lie between that bound and Max.
	Over50, Over90, Over99 bool
}

type latSlot struct {
	start  int64 // slot number (time / ownLatSlot); the slot is empty when stale
	counts [16]int64
	max    time.Duration
}

// ownLatency is the histogram of one server's round trips.
type ownLatency struct {
	once  sync.Once
	clock clock.Clock

	mu    sync.Mutex
	slots [ownLatSlots]latSlot
}

// useClock sets the clock the first connection to the server runs on.
func (l *ownLatency) useClock(c clock.Clock) { l.once.Do(func() { l.clock = clock.Or(c) }) }

func (l *ownLatency) now() time.Time {
	l.useClock(nil)
	return l.clock.Now()
}

func (l *ownLatency) record(d time.Duration, at time.Time) {
	n := at.UnixNano() / int64(ownLatSlot)
	b := len(ownLatBounds)
	for i, bound := range ownLatBounds {
		if d <= bound {
			b = i
			break
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	s := &l.slots[n%ownLatSlots]
	if s.start != n {
		*s = latSlot{start: n}
	}
	s.counts[b]++
	s.max = max(s.max, d)
}

func (l *ownLatency) read() OwnLatency {
	n := l.now().UnixNano() / int64(ownLatSlot)
	var counts [16]int64
	out := OwnLatency{Window: ownLatSlot * ownLatSlots}
	l.mu.Lock()
	for _, s := range l.slots {
		if s.start <= n-ownLatSlots || s.start > n {
			continue // stale: outside the window
		}
		for i, c := range s.counts {
			counts[i] += c
			out.Count += c
		}
		out.Max = max(out.Max, s.max)
	}
	l.mu.Unlock()
	if out.Count == 0 {
		return out
	}
	pct := func(p float64) (time.Duration, bool) {
		rank := int64(p*float64(out.Count) + 0.999999)
		var seen int64
		for i, c := range counts {
			seen += c
			if seen >= rank {
				if i == len(ownLatBounds) {
					return out.Max, true
				}
				return min(ownLatBounds[i], out.Max), false
			}
		}
		return out.Max, true
	}
	out.P50, out.Over50 = pct(0.50)
	out.P90, out.Over90 = pct(0.90)
	out.P99, out.Over99 = pct(0.99)
	return out
}

// OwnLatency reads the latency of Keydeck's round trips to this
// connection's server over the last minute (shared by every connection to
// that server).
func (c *Conn) OwnLatency() OwnLatency { return c.own.lat.read() }
