package stats_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/clock"
	"github.com/keydeck/keydeck/internal/demo"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/redisview/stats"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func openConn(t *testing.T, url string) *redisview.Conn {
	t.Helper()
	c, err := redisview.Open(redisview.ConnConfig{Name: "t", URL: url}, quiet())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// sweepOnce runs db's sweeper until a pass completes and returns its detail.
func sweepOnce(t *testing.T, c *redisview.Conn, db int) stats.DBDetail {
	t.Helper()
	return sweepOnceWith(t, c, db, stats.SweepBudget{KeysPerSec: 100000, Count: 500})
}

// sweepOnceWith is sweepOnce with the given budget (and read path).
func sweepOnceWith(t *testing.T, c *redisview.Conn, db int, budget stats.SweepBudget) stats.DBDetail {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pool := stats.NewSweepers(ctx, budget, time.Minute, quiet())
	t.Cleanup(func() { cancel(); pool.Wait() })
	s, release := pool.Acquire(c, db)
	defer release()
	var d stats.DBDetail
	redistest.Eventually(t, 20*time.Second, fmt.Sprintf("a completed pass of db%d", db), func() bool {
		d = s.Detail(stats.TotalKeys(ctx, c, db))
		return d.Pass >= 1
	})
	return d
}

func family(d stats.DBDetail, id string) stats.FamilyStats {
	for _, f := range d.Families {
		if f.Family.ID == id {
			return f
		}
	}
	return stats.FamilyStats{}
}

// Keys written by the seeds' own Lua scripts and commands are counted per
// family exactly; every key that breaks its pack is listed; unknown keys
// are grouped by prefix.
func TestSweeperFamiliesAndViolations(t *testing.T) {
	ctx := context.Background()
	rs := redistest.Start(t)
	db4, db6, db14 := rs.Client(4), rs.Client(6), rs.Client(14)
	now := time.Now().UnixMilli()
	for i := range 30 {
		key := fmt.Sprintf("verify:slider:rate:create:account:%s", b64(fmt.Sprintf("user%d", i)))
		if err := demo.SliderTokenBucket.Run(ctx, db4, []string{key}, now, 12, 12.0/60/1000, 1, 120).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 7 {
		db6.ZAdd(ctx, fmt.Sprintf("auth:limit:login:failures:user%d", i), redis.Z{Score: float64(now), Member: fmt.Sprintf("%d:1", now)})
		db6.Expire(ctx, fmt.Sprintf("auth:limit:login:failures:user%d", i), 15*time.Minute)
	}
	// Violations: a login window without TTL, a leaderboard of the wrong type.
	db6.ZAdd(ctx, "auth:limit:login:failures:forever", redis.Z{Score: float64(now), Member: "x"})
	db14.Set(ctx, "mg:score:leaderboard:2048", "not a zset", 0)
	big := make([]redis.Z, 500)
	for i := range big {
		big[i] = redis.Z{Score: float64(i), Member: fmt.Sprintf("player-%d", i)}
	}
	db14.ZAdd(ctx, "mg:score:leaderboard:snake", big...)
	for i := range 12 {
		db14.Set(ctx, fmt.Sprintf("legacy:thing:%d", i), "x", 0)
	}

	c := openConn(t, rs.URL(0))
	c.ForcePack(schema.BuiltinPack("eisland"))

	d4 := sweepOnce(t, c, 4)
	if d4.Estimated || !d4.TotalKeys.OK || d4.TotalKeys.V != 30 {
		t.Fatalf("db4: %+v", d4)
	}
	if f := family(d4, "slider-rate-create-account"); f.Count != 30 || f.Violations != 0 {
		t.Fatalf("slider buckets: %+v (families %v)", f, ids(d4))
	}

	d6 := sweepOnce(t, c, 6)
	if f := family(d6, "login-failures"); f.Count != 8 || f.Violations != 1 {
		t.Fatalf("login failures: %+v (families %v)", f, ids(d6))
	}
	if len(d6.Violations) != 1 || d6.Violations[0].Key != "auth:limit:login:failures:forever" {
		t.Fatalf("db6 violations = %+v", d6.Violations)
	}

	d14 := sweepOnce(t, c, 14)
	if len(d14.Violations) != 1 || d14.Violations[0].Key != "mg:score:leaderboard:2048" {
		t.Fatalf("db14 violations = %+v", d14.Violations)
	}
	if d14.UnmCount != 12 || len(d14.Unmatched) != 1 || d14.Unmatched[0].Prefix != "legacy:thing:*" {
		t.Fatalf("unmatched = %d %+v", d14.UnmCount, d14.Unmatched)
	}
	if len(d14.ByElements) == 0 || d14.ByElements[0].Key != "mg:score:leaderboard:snake" || d14.ByElements[0].Elements != 500 {
		t.Fatalf("biggest by elements = %+v", d14.ByElements)
	}
	if len(d14.ByMemory) == 0 || d14.ByMemory[0].Key != "mg:score:leaderboard:snake" {
		t.Fatalf("biggest by memory = %+v", d14.ByMemory)
	}
}

// The demo seeds of all three systems are fully explained by the built-in
// packs, and the one deliberate violation (a reservation without TTL) is found.
func TestSweeperOnSeededSystems(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	ei, gw, vq := redistest.Start(t), redistest.Start(t), redistest.Start(t)
	if err := demo.SeedEIsland(ctx, func(db int) redis.Cmdable { return ei.Client(db) }, now); err != nil {
		t.Fatal(err)
	}
	if err := demo.SeedGateway(ctx, gw.Client(0), now); err != nil {
		t.Fatal(err)
	}
	if err := demo.SeedVertique(ctx, vq.Client(0), now, demo.DemoSecret); err != nil {
		t.Fatal(err)
	}
	packs := schema.Builtin()
	for _, tc := range []struct {
		name string
		srv  *redistest.Server
		dbs  []int
	}{{"eisland", ei, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}}, {"gateway", gw, []int{0}}, {"vertique", vq, []int{0}}} {
		c := openConn(t, tc.srv.URL(0))
		if err := c.DetectPack(ctx, packs); err != nil {
			t.Fatal(err)
		}
		if ch := c.PackChoice(); ch.Pack == nil || ch.Pack.Name != tc.name {
			t.Fatalf("%s detected as %+v", tc.name, ch)
		}
		for _, db := range tc.dbs {
			d := sweepOnce(t, c, db)
			if d.UnmCount != 0 {
				t.Errorf("%s db%d: %d keys match no family: %+v", tc.name, db, d.UnmCount, d.Unmatched)
			}
			wantViol := 0
			if tc.name == "gateway" {
				wantViol = 1
			}
			if int(d.ViolCount) != wantViol {
				t.Errorf("%s db%d: %d violations: %+v", tc.name, db, d.ViolCount, d.Violations)
			}
			if tc.name == "gateway" && (len(d.Violations) != 1 || d.Violations[0].Family != "reservation") {
				t.Errorf("gateway violation = %+v", d.Violations)
			}
		}
	}
}

func ids(d stats.DBDetail) []string {
	var out []string
	for _, f := range d.Families {
		out = append(out, f.Family.ID)
	}
	return out
}

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// However many pages show a database, one sweeper reads it; it stops after
// the last viewer leaves and its linger passes.
func TestOneSweeperPerDatabase(t *testing.T) {
	rs := redistest.Start(t)
	rs.Client(1).Set(context.Background(), "k", "v", 0)
	c := openConn(t, rs.URL(0))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clk := clock.NewFake(time.Time{})
	pool := stats.NewSweepers(ctx, stats.SweepBudget{KeysPerSec: 1000, Count: 100}, 50*time.Millisecond, quiet(), stats.WithClock(clk))
	var releases []func()
	var first *stats.Sweeper
	for range 100 {
		s, rel := pool.Acquire(c, 1)
		if first == nil {
			first = s
		} else if s != first {
			t.Fatal("a second sweeper was started for the same database")
		}
		releases = append(releases, rel)
	}
	if n := pool.Running(); n != 1 {
		t.Fatalf("running = %d", n)
	}
	other, relOther := pool.Acquire(c, 2)
	if other == first || pool.Running() != 2 {
		t.Fatal("database 2 needs its own sweeper")
	}
	relOther()
	for _, r := range releases[1:] {
		r()
		r() // idempotent
	}
	clk.Advance(time.Hour)
	if n := pool.Running(); n != 1 {
		t.Fatalf("running = %d while one viewer stays", n)
	}
	releases[0]()
	clk.Advance(49 * time.Millisecond)
	if n := pool.Running(); n != 1 {
		t.Fatalf("running = %d before the linger ran out", n)
	}
	clk.Advance(time.Millisecond)
	if n := pool.Running(); n != 0 {
		t.Fatalf("sweepers still running after their linger: %d", n)
	}
}

// Keys no family explains have their memory counted apart, so that the
// domains and the unmatched keys add up to the database: a 1 MiB
// unmatched string is most of this one, not left out.
func TestUnmatchedMemoryCounted(t *testing.T) {
	ctx := context.Background()
	rs := redistest.Start(t)
	db4 := rs.Client(4)
	now := time.Now().UnixMilli()
	for i := range 30 {
		key := fmt.Sprintf("verify:slider:rate:create:account:%s", b64(fmt.Sprintf("user%d", i)))
		if err := demo.SliderTokenBucket.Run(ctx, db4, []string{key}, now, 12, 12.0/60/1000, 1, 120).Err(); err != nil {
			t.Fatal(err)
		}
	}
	db4.Set(ctx, "legacy:blob:1", string(make([]byte, 1<<20)), 0)
	db4.Set(ctx, "legacy:blob:2", "small", 0)

	c := openConn(t, rs.URL(0))
	c.ForcePack(schema.BuiltinPack("eisland"))
	d, err := stats.SweepPass(ctx, c, 4)
	if err != nil {
		t.Fatal(err)
	}
	if d.MemoryWhy != "" || d.UnmCount != 2 {
		t.Fatalf("memory %q, %d unmatched", d.MemoryWhy, d.UnmCount)
	}
	if d.UnmMemory < 1<<20 {
		t.Fatalf("unmatched memory %d, want the 1 MiB blob", d.UnmMemory)
	}
	var mem, keys int64
	for _, ds := range d.Domains {
		mem += ds.Memory
		keys += ds.Count
	}
	if mem+d.UnmMemory != d.Memory || keys+d.UnmCount != 32 {
		t.Fatalf("domains %d B + unmatched %d B ≠ %d B; %d + %d keys ≠ 32", mem, d.UnmMemory, d.Memory, keys, d.UnmCount)
	}
}

// Known gives a database's last completed pass — its violations — without
// reading Redis: nothing before a pass completed, the running sweeper's
// pass, then the pass kept once the sweeper stopped.
func TestKnownViolationsWithoutReading(t *testing.T) {
	ctx := context.Background()
	rs := redistest.Start(t)
	now := time.Now().UnixMilli()
	rs.Client(6).ZAdd(ctx, "auth:limit:login:failures:forever", redis.Z{Score: float64(now), Member: "x"})
	rs.Client(6).ZAdd(ctx, "auth:limit:login:failures:ok", redis.Z{Score: float64(now), Member: "x"})
	rs.Client(6).Expire(ctx, "auth:limit:login:failures:ok", 15*time.Minute)
	c := openConn(t, rs.URL(0))
	c.ForcePack(schema.BuiltinPack("eisland"))

	pctx, cancel := context.WithCancel(ctx)
	pool := stats.NewSweepers(pctx, stats.SweepBudget{KeysPerSec: 100000, Count: 500}, 50*time.Millisecond, quiet())
	t.Cleanup(func() { cancel(); pool.Wait() })
	if _, ok := pool.Known(c.Name, 6); ok {
		t.Fatal("known before any sweep")
	}
	s, release := pool.Acquire(c, 6)
	redistest.Eventually(t, 10*time.Second, "a pass", func() bool { return s.Detail(redisview.None[int64]("")).Pass >= 1 })
	check := func(when string) {
		t.Helper()
		d, ok := pool.Known(c.Name, 6)
		if !ok || d.ViolCount != 1 || len(d.Violations) != 1 || d.Violations[0].Key != "auth:limit:login:failures:forever" || d.CompletedAt.IsZero() {
			t.Fatalf("%s: %v %+v", when, ok, d)
		}
	}
	check("running")
	release()
	redistest.Eventually(t, 10*time.Second, "the sweeper stopped", func() bool { return pool.Running() == 0 })
	check("stopped")
	if _, ok := pool.Known(c.Name, 5); ok {
		t.Fatal("db5 known without a sweep")
	}
}
