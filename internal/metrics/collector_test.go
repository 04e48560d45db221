package metrics_test

import (
	"context"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/clock"
	"github.com/keydeck/keydeck/internal/demo"
	"github.com/keydeck/keydeck/internal/live"
	"github.com/keydeck/keydeck/internal/metrics"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/redisview/limits"
	"github.com/keydeck/keydeck/redisview/quotas"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/redisview/stats"
)

// rig is the console's workers on a real redis-server holding the eIsland
// demo's seeds, every one of them on one fake clock: once the clock stops,
// they all wait on it and send nothing.
type rig struct {
	rs     *redistest.Server
	clk    *clock.Fake
	src    metrics.Sources
	keeper *metrics.Keeper
	srv    *httptest.Server
	ctx    context.Context
}

func newRig(t *testing.T) *rig {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	rs := redistest.Start(t)
	now := time.Now()
	if err := demo.SeedEIsland(ctx, func(db int) redis.Cmdable { return rs.Client(db) }, now); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	clk := clock.NewFake(now)
	reg, err := redisview.NewRegistry([]redisview.ConnConfig{{Name: "eisland", URL: rs.URL(0)}}, log, redisview.WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.UsePacks(schema.Builtin(), map[string]string{"eisland": "eisland"}); err != nil {
		t.Fatal(err)
	}
	r := &rig{rs: rs, clk: clk, ctx: ctx}
	r.src = metrics.Sources{Conns: reg,
		Sweeps:  stats.NewSweepers(ctx, stats.SweepBudget{KeysPerSec: 1_000_000, Count: 1000}, time.Minute, log, stats.WithClock(clk)),
		Limits:  limits.NewPool(ctx, limits.DefaultBudget, time.Minute, limits.WithClock(clk)),
		Quotas:  quotas.NewWalkers(ctx, quotas.DefaultBudget, time.Second, time.Minute, nil, quotas.WithClock(clk)),
		Bans:    &metrics.BanHealth{},
		Hub:     live.New(ctx, log, time.Second, live.WithClock(clk)),
		Actions: action.New(rs.Client(15), action.Options{Now: clk.Now}),
		Now:     clk.Now,
	}
	r.keeper = &metrics.Keeper{Conns: reg, Sweeps: r.src.Sweeps.(*stats.Sweepers), Limits: r.src.Limits.(*limits.Pool),
		Quotas: r.src.Quotas.(*quotas.Walkers), Bans: r.src.Bans, Hold: true, Interval: time.Minute, Clock: clk}
	r.srv = httptest.NewServer(metrics.Handler(metrics.New(r.src)))
	done := make(chan struct{})
	go func() { defer close(done); reg.Monitor(ctx, time.Second) }()
	t.Cleanup(func() { r.srv.Close(); cancel(); <-done; reg.Close() })
	return r
}

func (r *rig) scrape(t *testing.T) string {
	t.Helper()
	res, err := http.Get(r.srv.URL + metrics.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("scrape: %d %v", res.StatusCode, err)
	}
	return string(b)
}

// run starts the keeper and advances the clock until every kind of
// worker holds figures.
func (r *rig) run(t *testing.T) string {
	t.Helper()
	go r.keeper.Run(r.ctx)
	want := []string{"keydeck_redis_up{", "keydeck_family_keys{", "keydeck_throttled_keys{", "keydeck_locks_held{",
		"keydeck_quota_used_ratio{", "keydeck_ban_set_members{", "keydeck_sweep_passes_total{"}
	var out string
	redistest.Eventually(t, 60*time.Second, "every worker's series", func() bool {
		r.clk.Advance(200 * time.Millisecond)
		out = r.scrape(t)
		for _, w := range want {
			if !strings.Contains(out, w) {
				return false
			}
		}
		return true
	})
	return out
}

// A scrape sends no Redis command: Redis's own command counts are the
// same before and after a hundred scrapes, but for the INFO that reads
// them.
func TestScrapeSendsNoRedisCommand(t *testing.T) {
	r := newRig(t)
	r.run(t)
	stat := r.rs.Client(0)
	calls := func() map[string]int64 {
		txt, err := stat.Info(context.Background(), "commandstats").Result()
		if err != nil {
			t.Fatal(err)
		}
		return redistest.ParseCommandStats(txt)
	}
	// The clock stopped, the workers finish the step they are in and
	// wait on it: the counts hold still (but for the INFO reading them).
	last, since := calls(), time.Now()
	redistest.Eventually(t, 30*time.Second, "the workers idle on the stopped clock", func() bool {
		now := calls()
		if onlyInfo(last, now) {
			return time.Since(since) > 300*time.Millisecond
		}
		last, since = now, time.Now()
		return false
	})
	before := calls()
	for range 100 {
		r.scrape(t)
	}
	after := calls()
	before["info"]++ // the INFO that read before
	if !maps.Equal(before, after) {
		for cmd, n := range after {
			if before[cmd] != n {
				t.Errorf("%s: %d commands during the scrapes", cmd, n-before[cmd])
			}
		}
	}
}

// onlyInfo: b differs from a by INFO calls alone.
func onlyInfo(a, b map[string]int64) bool {
	a, b = maps.Clone(a), maps.Clone(b)
	delete(a, "info")
	delete(b, "info")
	return maps.Equal(a, b)
}

var labelRE = regexp.MustCompile(`(\w+)="((?:[^"\\]|\\.)*)"`)

// Labels are bounded: only connection, database, family, list, action
// kind and outcome; no label value is a key of the server; and a family
// nobody swept yet is absent, not 0.
func TestLabelsAreBoundedAndNeverAKey(t *testing.T) {
	r := newRig(t)
	first := r.scrape(t)
	for _, s := range []string{"keydeck_family_keys", "keydeck_throttled_keys", "keydeck_quota_used_ratio", "keydeck_ban_set_members", "keydeck_sweep_passes_total"} {
		if strings.Contains(first, s+"{") {
			t.Errorf("%s before any sweep: a figure nobody read is absent, not 0", s)
		}
	}
	out := r.run(t)
	keys := map[string]bool{}
	for db := range 16 {
		c := r.rs.Client(db)
		it := c.Scan(context.Background(), 0, "*", 1000).Iterator()
		for it.Next(context.Background()) {
			keys[it.Val()] = true
		}
		if err := it.Err(); err != nil {
			t.Fatal(err)
		}
	}
	if len(keys) < 1000 {
		t.Fatalf("only %d keys seeded", len(keys))
	}
	allowed := map[string]bool{"conn": true, "db": true, "family": true, "list": true, "kind": true, "outcome": true}
	series := 0
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "keydeck_") {
			continue
		}
		series++
		for _, m := range labelRE.FindAllStringSubmatch(line, -1) {
			if !allowed[m[1]] {
				t.Errorf("label %s in %s", m[1], line)
			}
			if keys[m[2]] {
				t.Errorf("label value %q is a key name: %s", m[2], line)
			}
		}
	}
	// Per family and database, not per key: far fewer series than keys.
	if series == 0 || series > 1000 {
		t.Fatalf("%d keydeck series over %d keys", series, len(keys))
	}
	t.Logf("%d keydeck series over %d keys", series, len(keys))
}
