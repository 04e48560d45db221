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

	"github.com/keydeck/keydeck/internal/clock"
	"github.com/keydeck/keydeck/internal/demo"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/schema"
)

// probeEvery is the monitor's interval in these tests, on the fake clock.
const probeEvery = 100 * time.Millisecond

// waitLong bounds a failure: the fake clock decides what is due, the
// deadline only how long a stuck test hangs.
const waitLong = 20 * time.Second

// monitored is a registry of one connection with the built-in packs, its
// monitor running (as in Keydeck) on a fake clock until the test ends.
func monitored(t *testing.T, url string) (*redisview.Conn, *clock.Fake) {
	t.Helper()
	clk := clock.NewFake(time.Time{})
	reg, err := redisview.NewRegistry([]redisview.ConnConfig{{Name: "x", URL: url}}, slog.New(slog.NewTextHandler(io.Discard, nil)), redisview.WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.UsePacks(schema.Builtin(), nil); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { reg.Monitor(ctx, probeEvery) })
	t.Cleanup(func() { cancel(); wg.Wait(); reg.Close() })
	c, _ := reg.Get("x")
	return c, clk
}

// advance moves the clock d on and waits for the probe that falls due (the
// monitor checks the server at the clock's new time).
func advance(t *testing.T, c *redisview.Conn, clk *clock.Fake, d time.Duration) {
	t.Helper()
	clk.Advance(d)
	now := clk.Now()
	redistest.Eventually(t, waitLong, "a probe at "+now.String(), func() bool { return !c.Status().Checked.Before(now) })
}

// sampled advances the clock d and waits for a sampling to end after it.
func sampled(t *testing.T, c *redisview.Conn, clk *clock.Fake, d time.Duration) redisview.PackChoice {
	t.Helper()
	advance(t, c, clk, d)
	now := clk.Now()
	redistest.Eventually(t, waitLong, "a sampling at "+now.String(), func() bool { return !c.PackChoice().At.Before(now) })
	return c.PackChoice()
}

// notSampled advances the clock d and checks that no sampling followed:
// the probe after it ran, and so did the one after that (which would have
// started a due sampling before), without a choice made since.
func notSampled(t *testing.T, c *redisview.Conn, clk *clock.Fake, d time.Duration) {
	t.Helper()
	before := c.PackChoice().At
	advance(t, c, clk, d)
	advance(t, c, clk, probeEvery)
	if at := c.PackChoice().At; !at.Equal(before) {
		t.Fatalf("sampled %v after the clock moved %v", at.Sub(before), d)
	}
}

func seedEIsland(t *testing.T, s *redistest.Server) {
	t.Helper()
	if err := demo.SeedEIsland(context.Background(), func(db int) redis.Cmdable { return s.Client(db) }, time.Now()); err != nil {
		t.Fatal(err)
	}
}

func isPack(c *redisview.Conn, name string) bool {
	p := c.Pack()
	return p != nil && p.Name == name
}

// Keydeck started while its server was down: when the server comes up and
// is filled, the pack is detected at the next sampling (a second after the
// empty one), not never.
func TestPackDetectedWhenTheServerComesUpLater(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	s.Stop()
	c, clk := monitored(t, s.URL(0))
	redistest.Eventually(t, waitLong, "the first probe", func() bool { return !c.Status().Checked.IsZero() })
	if st := c.Status(); st.Up {
		t.Fatalf("status before the server starts: %+v", st)
	}
	s.Restart() // now listening, empty
	// Keydeck sees it come up and samples it, empty, before it fills.
	if ch := sampled(t, c, clk, probeEvery); ch.Pack != nil || !strings.Contains(ch.Why, "no keys") {
		t.Fatalf("first sampling: %+v", ch)
	}
	seedEIsland(t, s)
	notSampled(t, c, clk, time.Second-2*probeEvery) // the back-off starts at a second
	if ch := sampled(t, c, clk, probeEvery); !isPack(c, "eisland") {
		t.Fatalf("a second after the empty sampling: %+v", ch)
	}
}

// A server that is empty when Keydeck first samples it gets its pack once
// it fills; until then the page says why there is none and that Keydeck
// keeps looking, sampling at 1, 2, 4, 8, then every 10 s.
func TestPackDetectedWhenAnEmptyServerFills(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	c, clk := monitored(t, s.URL(0))
	redistest.Eventually(t, waitLong, "the first sampling", func() bool { return !c.PackChoice().At.IsZero() })
	ch := c.PackChoice()
	if ch.Pack != nil || !strings.Contains(ch.Why, "no keys") || !strings.Contains(ch.Why, "sampled again within 10s") {
		t.Fatalf("empty server: %+v", ch)
	}
	// The back-off grows while nothing fits: each wait is the last doubled.
	for _, wait := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 10 * time.Second, 10 * time.Second} {
		notSampled(t, c, clk, wait-2*probeEvery)
		sampled(t, c, clk, probeEvery)
	}
	seedEIsland(t, s)
	notSampled(t, c, clk, 10*time.Second-2*probeEvery)
	if ch := sampled(t, c, clk, probeEvery); !isPack(c, "eisland") {
		t.Fatalf("filled server: %+v", ch)
	}

	// Once chosen, the pack stays, and sampling stops.
	calls, err := s.CommandCalls(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		notSampled(t, c, clk, 10*time.Second)
	}
	again, err := s.CommandCalls(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if again["scan"] != calls["scan"] || !isPack(c, "eisland") {
		t.Fatalf("SCANs after the pack was chosen: %d → %d, pack %+v", calls["scan"], again["scan"], c.PackChoice())
	}
}

// A server restarted empty and refilled by another application is sampled
// again at once when it comes back, and its back-off starts again from a
// second, however long it had grown.
func TestPackSampledAgainAtOnceWhenTheServerReturns(t *testing.T) {
	// Not parallel: its eight samplings each wait on a real pack sampling
	// after the fake clock moves; beside the package's cluster tests (six
	// servers each) one of them missed its 20 s in a fresh-clone run.
	s := redistest.Start(t)
	c, clk := monitored(t, s.URL(0))
	redistest.Eventually(t, waitLong, "the first sampling", func() bool { return !c.PackChoice().At.IsZero() })
	for range 6 { // the wait between samplings reaches its maximum
		sampled(t, c, clk, 10*time.Second)
	}
	s.Stop()
	advance(t, c, clk, probeEvery)
	if c.Status().Up {
		t.Fatalf("up after the server stopped: %+v", c.Status())
	}
	s.Restart()
	if ch := sampled(t, c, clk, probeEvery); ch.Pack != nil || !c.Status().Up { // at once, empty
		t.Fatalf("after the restart: %+v, %+v", ch, c.Status())
	}
	seedEIsland(t, s)
	if ch := sampled(t, c, clk, time.Second); !isPack(c, "eisland") {
		t.Fatalf("a second after the restart's sampling: %+v", ch)
	}
}

// Until the first sampling has said which pack a monitored server holds, a
// key's family — and so whether its values are secret — is unknown: every
// key is treated as sensitive (a TOTP secret was readable on the key page
// in the seconds after start-up). Once sampled, only the pack's sensitive
// families are.
func TestValuesWithheldUntilThePackIsKnown(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	s.Stop()
	c, clk := monitored(t, s.URL(0))
	redistest.Eventually(t, waitLong, "the first probe", func() bool { return !c.Status().Checked.IsZero() })
	const secret, plain = "totp:security:secret:plain:alice", "no-family:at-all"
	if !c.Sensitive(5, secret) || !c.Sensitive(5, plain) {
		t.Fatal("a key of a server not sampled yet is not withheld")
	}
	s.Restart()
	seedEIsland(t, s)
	if ch := sampled(t, c, clk, probeEvery); !isPack(c, "eisland") {
		t.Fatalf("sampling: %+v", ch)
	}
	if !c.Sensitive(5, secret) || c.Sensitive(5, plain) {
		t.Fatalf("after sampling: secret %v, plain %v", c.Sensitive(5, secret), c.Sensitive(5, plain))
	}
}

// A least-privilege user allowed PING but not INFO (see
// TestOverviewFallbackForRestrictedUser): the monitor's first probe asks
// INFO cluster, which is refused; the connection is settled as standalone
// and stays up on PING, so its pack is sampled (it was "down" forever,
// every value withheld).
func TestMonitorKeepsUpAUserRefusedInfo(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := redistest.Start(t)
	seedEIsland(t, s)
	if err := s.Client(0).Do(ctx, "ACL", "SETUSER", "viewer", "on", ">pw", "~*", "+@read", "+@connection", "+select", "-info", "-config").Err(); err != nil {
		t.Fatal(err)
	}
	c, clk := monitored(t, "redis://viewer:pw@"+s.Addr+"/0")
	redistest.Eventually(t, waitLong, "the first probe", func() bool { return !c.Status().Checked.IsZero() })
	if st := c.Status(); !st.Up {
		t.Fatalf("a user refused INFO is reported down: %+v", st)
	}
	if top := c.Topology(); top.Kind != redisview.Standalone {
		t.Fatalf("topology %+v", top)
	}
	// The first good probe starts the sampling.
	redistest.Eventually(t, waitLong, "the pack sampled", func() bool { return isPack(c, "eisland") })
	advance(t, c, clk, probeEvery)
	if st := c.Status(); !st.Up {
		t.Fatalf("down on a later probe: %+v", st)
	}
}

// Packs offered and no sampling run yet: values are withheld whether or
// not a monitor runs (a request served before the monitor started, or
// after it ended, saw them).
func TestValuesWithheldWithoutAMonitorUntilSampled(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	reg, err := redisview.NewRegistry([]redisview.ConnConfig{{Name: "x", URL: s.URL(0)}}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reg.Close() })
	c, _ := reg.Get("x")
	const secret, plain = "totp:security:secret:plain:alice", "no-family:at-all"
	if c.Sensitive(5, secret) || c.Sensitive(5, plain) {
		t.Fatal("a connection offered no packs withholds values")
	}
	if err := reg.UsePacks(schema.Builtin(), nil); err != nil {
		t.Fatal(err)
	}
	if !c.Sensitive(5, secret) || !c.Sensitive(5, plain) {
		t.Fatal("a key of a connection not sampled yet, no monitor running, is not withheld")
	}
	seedEIsland(t, s)
	if err := c.DetectPack(context.Background(), schema.Builtin()); err != nil || !isPack(c, "eisland") {
		t.Fatalf("sampling: %+v, %v", c.PackChoice(), err)
	}
	if !c.Sensitive(5, secret) || c.Sensitive(5, plain) {
		t.Fatalf("after sampling: secret %v, plain %v", c.Sensitive(5, secret), c.Sensitive(5, plain))
	}
}
