package stats_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/stats"
)

// TestSweepCountsEveryPrimary: a key sweep of a cluster connection (by
// script where it would be used, and by pipelines) reads every key of
// every primary: its count equals DBSIZE summed over the primaries.
func TestSweepCountsEveryPrimary(t *testing.T) {
	cl := redistest.StartCluster(t)
	ctx := context.Background()
	cc := cl.Client()
	p := cc.Pipeline()
	for i := range 2000 {
		p.HSet(ctx, fmt.Sprintf("h:%d", i), "f", "v")
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	var sum int64
	for _, s := range cl.Primaries() {
		n, err := s.Client(0).DBSize(ctx).Result()
		if err != nil || n == 0 {
			t.Fatalf("DBSIZE on %s = %d, %v", s.Addr, n, err)
		}
		sum += n
	}
	c, err := redisview.Open(redisview.ConnConfig{Name: "c", URL: "redis://" + cl.Nodes[2].Addr}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.Detect(ctx); err != nil {
		t.Fatal(err)
	}
	if got := stats.TotalKeys(ctx, c, 0); !got.OK || got.V != sum {
		t.Errorf("TotalKeys = %+v; DBSIZE over the primaries sums to %d", got, sum)
	}
	for _, script := range []bool{true, false} {
		d, err := stats.SweepPass(ctx, c, 0, script)
		if err != nil {
			t.Fatalf("script %v: %v", script, err)
		}
		if d.UnmCount != sum {
			t.Errorf("script %v: the pass counted %d keys; DBSIZE over the primaries sums to %d", script, d.UnmCount, sum)
		}
	}
}
