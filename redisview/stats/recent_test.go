package stats_test

import (
	"context"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview/stats"
)

// A database whose sweeper stopped a moment ago opens again with the pass
// that sweeper completed (and its completion time), not with an empty
// frame; a sweeper that has nothing yet lets a page wait for its first batch.
func TestSweeperStartsFromRecentPass(t *testing.T) {
	rs := redistest.Start(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for i := range 50 {
		rs.Client(1).Set(ctx, "k"+string(rune('a'+i%26))+string(rune('a'+i/26)), "v", 0)
	}
	c := openConn(t, rs.URL(0))
	pool := stats.NewSweepers(ctx, stats.SweepBudget{KeysPerSec: 100000, Count: 100}, 20*time.Millisecond, quiet())

	s, release := pool.Acquire(c, 1)
	s.WaitRead(ctx, 10*time.Second) // bounds failure only
	redistest.Eventually(t, 10*time.Second, "a completed pass", func() bool { return !s.Detail(stats.TotalKeys(ctx, c, 1)).CompletedAt.IsZero() })
	first := s.Detail(stats.TotalKeys(ctx, c, 1))
	release()
	redistest.Eventually(t, 10*time.Second, "the sweeper stopped", func() bool { return pool.Running() == 0 })

	s2, release2 := pool.Acquire(c, 1)
	defer release2()
	if s2 == s {
		t.Fatal("the stopped sweeper was reused")
	}
	d := s2.Detail(stats.TotalKeys(ctx, c, 1))
	if d.CompletedAt.IsZero() || d.Estimated || len(d.Unmatched) == 0 || d.UnmCount != first.UnmCount {
		t.Fatalf("a restarted sweeper shows %+v, want the previous pass %+v", d, first)
	}
}
