package demo

import (
	"fmt"
	"runtime"
	"testing"
	"time"
)

// The slow log is a ring: newest first, trimmed to its length, and
// logging one command into a long log copies nothing of the log.
func TestSlowlogRing(t *testing.T) {
	s := slowlog{max: 3}
	at := time.Unix(1_700_000_000, 0)
	for i := range 5 {
		s.record(at, time.Millisecond, []string{"set", fmt.Sprint("k", i)}, "a", "n")
	}
	ids := func() string {
		return fmt.Sprint(func() (out []int64) {
			for _, e := range s.newest(-1) {
				out = append(out, e.id)
			}
			return
		}())
	}
	if got := ids(); got != "[4 3 2]" {
		t.Errorf("entries = %s, want [4 3 2]", got)
	}
	if got := fmt.Sprint(len(s.newest(2)), s.newest(1)[0].id); got != "2 4" {
		t.Errorf("newest(2), newest(1) = %s", got)
	}
	s.max = 2
	s.trim()
	if got := ids(); got != "[4 3]" {
		t.Errorf("after trim to 2: %s", got)
	}
	s.max = 5
	s.trim()
	s.record(at, time.Millisecond, []string{"get", "x"}, "a", "n")
	if got := ids(); got != "[5 4 3]" {
		t.Errorf("after growing to 5 and one more: %s", got)
	}

	long := slowlog{max: 20_000}
	args := []string{"get", "k"}
	for range 20_000 {
		long.record(at, time.Millisecond, args, "a", "n")
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 100 {
		long.record(at, time.Millisecond, args, "a", "n")
	}
	runtime.ReadMemStats(&after)
	if b := after.TotalAlloc - before.TotalAlloc; b > 1<<20 {
		t.Errorf("100 commands logged into a 20,000-entry log allocated %d bytes: the log is copied per entry", b)
	}
}
