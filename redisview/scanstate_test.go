package redisview_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/clock"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
)

// TestClusterSlotMapAgesOnTheConnectionsClock: the slot map a walk starts
// from is read again once it is 30 s old on the connection's clock (a
// fake-clocked console must not keep one for 30 s of wall time, nor for
// ever), and not before.
func TestClusterSlotMapAgesOnTheConnectionsClock(t *testing.T) {
	cl := redistest.StartCluster(t)
	loadCluster(t, cl, 3000) // no node's walk ends in a step (an end reads the map again)
	ctx := context.Background()
	clk := clock.NewFake(time.Unix(1e9, 0))
	reg, err := redisview.NewRegistry([]redisview.ConnConfig{{Name: "x", URL: cl.URL()}}, slog.New(slog.NewTextHandler(io.Discard, nil)), redisview.WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reg.Close() })
	c, _ := reg.Get("x")
	if err := c.Detect(ctx); err != nil {
		t.Fatal(err)
	}
	slotReads := func() int64 {
		var n int64
		for _, s := range cl.Nodes {
			m, err := s.CommandCalls(ctx)
			if err != nil {
				t.Fatal(err)
			}
			n += m["cluster|slots"]
		}
		return n
	}
	start := func() {
		t.Helper()
		if _, _, err := redisview.ScanStep(ctx, c.Client(), redisview.CursorStart, "", 10, ""); err != nil {
			t.Fatal(err)
		}
	}
	start()
	n0 := slotReads()
	start()
	clk.Advance(29 * time.Second)
	start()
	if n := slotReads() - n0; n != 0 {
		t.Fatalf("%d CLUSTER SLOTS for walks started within 30 s of the map's read", n)
	}
	clk.Advance(2 * time.Second)
	start()
	if n := slotReads() - n0; n != 1 {
		t.Fatalf("%d CLUSTER SLOTS for a walk started 31 s (the connection's clock) after the map's read; want 1", n)
	}
}
