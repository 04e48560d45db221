package redistest

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Eventually polls cond until it holds, failing t when d passes first:
// the deadline only bounds a failure, it never decides a pass. It is the
// one place tests wait for something another goroutine or a server does.
// It checks often at first and less often the longer it waits (5 ms,
// doubling up to eventuallyMaxGap): many conditions are an HTTP request
// of a page under -race, and checking them every 5 ms for seconds took
// the CPU the console needed to get there.
func Eventually(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	gap := 5 * time.Millisecond
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", d, what)
		}
		time.Sleep(gap)
		gap = min(2*gap, eventuallyMaxGap)
	}
}

// eventuallyMaxGap is the longest Eventually waits between two checks.
const eventuallyMaxGap = 40 * time.Millisecond

// Never checks that cond stays false while d passes, failing t as soon as
// it holds: an absence check (no poll after the last viewer left). Real
// time is the point: whatever runs in another goroutine or process gets d
// to show itself.
func Never(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if cond() {
			t.Fatalf("within %v: %s", d, what)
		}
		time.Sleep(time.Millisecond)
	}
	if cond() {
		t.Fatalf("within %v: %s", d, what)
	}
}

// CommandCount is how many times the server ran cmd (calls and rejected
// calls, subcommands included: "config" counts CONFIG GET and CONFIG SET).
func (s *Server) CommandCount(t testing.TB, cmd string) int64 {
	t.Helper()
	txt, err := s.Client(0).Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	return CountCommand(txt, cmd)
}

// CountCommand counts cmd in the body of INFO commandstats: calls and
// rejected calls, subcommands included (Redis 7 counts them apart:
// cmdstat_config|get).
func CountCommand(commandstats, cmd string) int64 {
	var n int64
	for _, line := range strings.Split(commandstats, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || name != "cmdstat_"+cmd && !strings.HasPrefix(name, "cmdstat_"+cmd+"|") {
			continue
		}
		for _, kv := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(kv, "=")
			if k == "calls" || k == "rejected_calls" {
				x, _ := strconv.ParseInt(v, 10, 64)
				n += x
			}
		}
	}
	return n
}

// CountDuring is how many times the server ran cmd while d passed. Real
// time is the point: it is a window to count a real server's load in, not
// a wait for a condition (a fake clock cannot tell what another process
// does meanwhile). It is the one place tests sleep for a window.
func (s *Server) CountDuring(t testing.TB, cmd string, d time.Duration) int64 {
	t.Helper()
	n0 := s.CommandCount(t, cmd)
	time.Sleep(d)
	return s.CommandCount(t, cmd) - n0
}

// Quiet fails t if the server runs cmd while d passes (see CountDuring).
func (s *Server) Quiet(t testing.TB, cmd string, d time.Duration) {
	t.Helper()
	if n := s.CountDuring(t, cmd, d); n > 0 {
		t.Fatalf("%d %s in a window of %v where none was due", n, strings.ToUpper(cmd), d)
	}
}
