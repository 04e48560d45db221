package stats

import (
	"context"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/clock"
	"github.com/keydeck/keydeck/internal/redistest"
)

// On a server nobody else talks to, the Ops/sec figure is the
// applications' rate without Keydeck's own commands: zero while only a
// database sweep (and the keyspace listener) runs, though Keydeck itself
// sends thousands of commands a second; then, with a separate client
// sampled yields 0…n-1, one every 250 ms: the rates compare the server's
// counters between reads, so real time between them is the point.
func sampled(n int) func(func(int) bool) {
	return func(yield func(int) bool) {
		for i := range n {
			time.Sleep(250 * time.Millisecond)
			if !yield(i) {
				return
			}
		}
	}
}

// issuing commands, exactly that client's commands.
func TestOverviewTellsOwnTrafficApart(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := redistest.Start(t, "--notify-keyspace-events", "KEA")
	admin := s.Client(0)
	p := admin.Pipeline()
	for i := range 3000 {
		p.Set(ctx, fmt.Sprintf("k:%d", i), "v", time.Duration(i%5)*time.Hour)
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	c := openConn(t, s.URL(0))
	var bg sync.WaitGroup
	defer bg.Wait()
	defer cancel()
	bg.Go(func() { c.WatchKeyspace(ctx, func(int, string) {}) })
	pool := NewSweepers(ctx, DefaultSweepBudget, time.Second, quietLog())
	_, release := pool.Acquire(c, 0)
	defer release()
	defer pool.Wait()
	defer cancel()

	r := NewOverviewReader(c)
	if ov := r.Read(ctx); ov.Err != "" || !ov.Server.OpsPerSec.Pending {
		t.Fatalf("first read: err %q, ops %+v", ov.Err, ov.Server.OpsPerSec)
	}
	exact, maxOwn := 0, 0.0
	for i := range sampled(8) {
		sv := r.Read(ctx).Server
		if !sv.OpsPerSec.OK || !sv.OwnOpsPerSec.OK || !sv.TotalOpsPerSec.OK {
			t.Fatalf("read %d: ops %+v own %+v total %+v", i, sv.OpsPerSec, sv.OwnOpsPerSec, sv.TotalOpsPerSec)
		}
		if !sv.OpsApprox {
			exact++
			if sv.OpsPerSec.V != 0 {
				t.Errorf("read %d: idle server, exact application rate %.1f/s (own %.0f/s, total %.0f/s)", i, sv.OpsPerSec.V, sv.OwnOpsPerSec.V, sv.TotalOpsPerSec.V)
			}
		} else if sv.OpsPerSec.V > 0.05*sv.TotalOpsPerSec.V {
			t.Errorf("read %d: idle server, application rate ≈%.1f/s of %.0f/s", i, sv.OpsPerSec.V, sv.TotalOpsPerSec.V)
		}
		if sv.OwnOpsPerSec.V <= 0 {
			t.Errorf("read %d: Keydeck's own rate %.1f/s", i, sv.OwnOpsPerSec.V)
		}
		maxOwn = max(maxOwn, sv.OwnOpsPerSec.V)
	}
	t.Logf("idle: %d of 8 reads exact, Keydeck's own rate up to %.0f/s", exact, maxOwn)
	if maxOwn < 1000 {
		t.Errorf("Keydeck's own rate peaked at %.0f/s while sweeping 3,000 keys", maxOwn)
	}
	if exact < 4 {
		t.Errorf("only %d of 8 reads were exact", exact)
	}

	// Another client: about 200 INCRs a second.
	var sent atomic.Int64
	other := s.Client(1)
	bg.Go(func() {
		pace := time.NewTicker(5 * time.Millisecond) // a load generator: its rate is real time
		defer pace.Stop()
		for ctx.Err() == nil {
			if other.Incr(ctx, "n").Err() == nil {
				sent.Add(1)
			}
			select {
			case <-ctx.Done():
			case <-pace.C:
			}
		}
	})
	redistest.Eventually(t, 10*time.Second, "the other client's traffic", func() bool { return sent.Load() >= 20 })
	prevAt := r.Read(ctx).At
	from := sent.Load()
	var app, secs float64
	for i := range sampled(8) {
		ov := r.Read(ctx)
		sv := ov.Server
		if !sv.OpsPerSec.OK {
			t.Fatalf("read %d under load: %+v", i, sv.OpsPerSec)
		}
		dt := ov.At.Sub(prevAt).Seconds()
		app += sv.OpsPerSec.V * dt
		secs += dt
		prevAt = ov.At
	}
	got, want := app, float64(sent.Load()-from)
	t.Logf("under load: application %.0f commands (%.1f/s), the other client sent %.0f", got, got/secs, want)
	if want < 100 {
		t.Fatalf("the other client sent only %.0f commands in %.1f s", want, secs)
	}
	if math.Abs(got-want) > 0.1*want {
		t.Fatalf("application commands: Keydeck says %.0f (%.0f/s), the other client sent %.0f (%.0f/s)", got, got/secs, want, want/secs)
	}
}

// A page opened right after start-up gets rates as soon as a second read
// can give them, not the first read's "measuring…" for as long as it is
// fresh.
func TestLatestMeasuresRatesOnceItCan(t *testing.T) {
	ctx := context.Background()
	s := redistest.Start(t)
	r := NewOverviewReader(openConn(t, s.URL(0)))
	clk := clock.NewFake(time.Now())
	r.now = clk.Now
	first := r.Latest(ctx, time.Hour)
	if !first.Server.OpsPerSec.Pending {
		t.Fatalf("first read: %+v", first.Server.OpsPerSec)
	}
	if again := r.Latest(ctx, time.Hour); !again.At.Equal(first.At) {
		t.Fatal("a fresh read was not reused")
	}
	clk.Advance(minRateInterval - time.Millisecond)
	if again := r.Latest(ctx, time.Hour); !again.At.Equal(first.At) {
		t.Fatal("read again before a rate could be measured")
	}
	clk.Advance(time.Millisecond)
	if ov := r.Latest(ctx, time.Hour); !ov.Server.OpsPerSec.OK || !ov.Server.OwnOpsPerSec.OK || ov.Server.OwnOpsPerSec.V <= 0 {
		t.Fatalf("second read: ops %+v own %+v", ov.Server.OpsPerSec, ov.Server.OwnOpsPerSec)
	}
}
