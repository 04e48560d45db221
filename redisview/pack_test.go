package redisview_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/demo"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/schema"
)

// monitored is a registry of one connection with the built-in packs, its
// monitor running (as in Keydeck) until the test ends.
func monitored(t *testing.T, url string) *redisview.Conn {
	t.Helper()
	reg, err := redisview.NewRegistry([]redisview.ConnConfig{{Name: "x", URL: url}}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.UsePacks(schema.Builtin(), nil); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { reg.Monitor(ctx, 100*time.Millisecond) })
	t.Cleanup(func() { cancel(); wg.Wait(); reg.Close() })
	c, _ := reg.Get("x")
	return c
}

func seedEIsland(t *testing.T, s *redistest.Server) {
	t.Helper()
	if err := demo.SeedEIsland(context.Background(), func(db int) redis.Cmdable { return s.Client(db) }, time.Now()); err != nil {
		t.Fatal(err)
	}
}

// waitPack waits until the connection's pack is name, at most d after
// start, and says how long after start it was chosen.
func waitPack(t *testing.T, c *redisview.Conn, name string, start time.Time, d time.Duration) time.Duration {
	t.Helper()
	for time.Since(start) < d {
		if p := c.Pack(); p != nil && p.Name == name {
			return time.Since(start)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("after %s the pack is %+v", d, c.PackChoice())
	return 0
}

// Keydeck started while its server was down: when the server comes up and
// is filled, the pack is detected within seconds, not never.
func TestPackDetectedWhenTheServerComesUpLater(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	s.Stop()
	c := monitored(t, s.URL(0))
	deadline := time.Now().Add(5 * time.Second)
	for c.Status().Checked.IsZero() && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if st := c.Status(); st.Up || st.Checked.IsZero() {
		t.Fatalf("status before the server starts: %+v", st)
	}
	s.Restart() // now listening, empty
	// Keydeck sees it come up and samples it, empty, before it fills.
	for c.PackChoice().Why == "" && time.Now().Before(deadline.Add(5*time.Second)) {
		time.Sleep(20 * time.Millisecond)
	}
	if ch := c.PackChoice(); ch.Pack != nil || !strings.Contains(ch.Why, "no keys") {
		t.Fatalf("first sampling: %+v", ch)
	}
	start := time.Now()
	seedEIsland(t, s)
	took := waitPack(t, c, "eisland", start, 5*time.Second)
	t.Logf("eisland chosen %s after the keys began to be written", took.Round(time.Millisecond))
}

// A server that is empty when Keydeck first samples it gets its pack once
// it fills; until then the page says why there is none and that Keydeck
// keeps looking.
func TestPackDetectedWhenAnEmptyServerFills(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	c := monitored(t, s.URL(0))
	deadline := time.Now().Add(5 * time.Second)
	for c.PackChoice().Why == "" && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	ch := c.PackChoice()
	if ch.Pack != nil || !strings.Contains(ch.Why, "no keys") || !strings.Contains(ch.Why, "sampled again within 10s") {
		t.Fatalf("empty server: %+v", ch)
	}
	time.Sleep(3 * time.Second) // the back-off grows while nothing fits
	start := time.Now()
	seedEIsland(t, s)
	took := waitPack(t, c, "eisland", start, 12*time.Second)
	t.Logf("eisland chosen %s after the keys began to be written", took.Round(time.Millisecond))

	// Once chosen, the pack stays, and sampling stops.
	calls, err := s.CommandCalls(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2500 * time.Millisecond)
	again, err := s.CommandCalls(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if again["scan"] != calls["scan"] {
		t.Fatalf("SCANs after the pack was chosen: %d → %d", calls["scan"], again["scan"])
	}
}

// A server restarted empty and refilled by another application is sampled
// again at once when it comes back.
func TestPackSampledAgainAtOnceWhenTheServerReturns(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	c := monitored(t, s.URL(0))
	deadline := time.Now().Add(5 * time.Second)
	for c.PackChoice().Why == "" && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(7 * time.Second) // the wait between samplings reaches its maximum
	s.Stop()
	for c.Status().Up && time.Now().Before(deadline.Add(10*time.Second)) {
		time.Sleep(20 * time.Millisecond)
	}
	s.Restart()
	for !c.Status().Up && time.Now().Before(deadline.Add(15*time.Second)) {
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // sampled at once, empty
	start := time.Now()
	seedEIsland(t, s)
	took := waitPack(t, c, "eisland", start, 3*time.Second)
	t.Logf("eisland chosen %s after the keys began to be written", took.Round(time.Millisecond))
}
