package redisview

import (
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/clock"
)

// The percentiles cover the last minute only, read from fixed buckets.
func TestOwnLatencyWindow(t *testing.T) {
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	var l ownLatency
	l.useClock(clk)
	for i := range 100 {
		d := 200 * time.Microsecond // bucket ≤ 250 µs
		if i >= 95 {
			d = 40 * time.Millisecond // bucket ≤ 50 ms
		}
		l.record(d, clk.Now())
	}
	l.record(7*time.Second, clk.Now()) // over the last bound
	got := l.read()
	if got.Count != 101 || got.P50 != 250*time.Microsecond || got.P90 != 250*time.Microsecond ||
		got.P99 != 50*time.Millisecond || got.Max != 7*time.Second || got.Over99 {
		t.Fatalf("read = %+v", got)
	}
	clk.Advance(30 * time.Second)
	l.record(time.Millisecond, clk.Now())
	clk.Advance(35 * time.Second) // the first slot has left the window
	if got := l.read(); got.Count != 1 || got.Max != time.Millisecond || got.P50 != time.Millisecond {
		t.Fatalf("a minute later: %+v", got)
	}
	clk.Advance(time.Minute)
	if got := l.read(); got.Count != 0 {
		t.Fatalf("two minutes later: %+v", got)
	}
}
