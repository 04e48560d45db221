package quotas_test

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/demo"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/quotas"
	"github.com/keydeck/keydeck/redisview/schema"
)

func reservations(t testing.TB, s quotas.Snapshot) map[string]quotas.Row {
	t.Helper()
	out := map[string]quotas.Row{}
	for _, r := range family(t, s, "reservation").Rows {
		out[r.Key] = r
	}
	return out
}

// A reservation is orphaned when its request id is in none of the
// concurrency sets and it is older than a request lives (or has no TTL);
// not when a set holds it, not while young, and not known while the walk
// has not seen every set.
func TestOrphanedReservations(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	c := srv.Client(0)
	c.Set(ctx, "cfg:routing:version", 1, 0)
	c.SAdd(ctx, "q:conc:gk_a", "req_busy", "req_other")
	c.Expire(ctx, "q:conc:gk_a", 5*time.Minute)
	c.SAdd(ctx, "q:conc:gk_b", "req_b")
	c.Set(ctx, "q:reserved:req_old", 4096, 2*time.Minute)                 // 3m old, in no set
	c.Set(ctx, "q:reserved:req_forever", 8192, 0)                         // no TTL, in no set
	c.Set(ctx, "q:reserved:req_young", 512, 4*time.Minute+40*time.Second) // 20s old, in no set
	c.Set(ctx, "q:reserved:req_busy", 1024, time.Minute)                  // 4m old, in gk_a
	conn := open(t, srv, "gateway")

	// Before a pass completes the sets are not all known: nothing is
	// called orphaned. (COUNT 1: the first step sees a key or two.)
	w := quotas.NewWalker(conn, quotas.Budget{Scans: 1, Count: 1}, nil)
	for range 4 {
		if err := w.Step(ctx); err != nil {
			t.Fatal(err)
		}
		s := w.Snapshot()
		if s.Pass > 0 {
			break
		}
		for _, f := range s.Families {
			for _, r := range f.Rows {
				if r.Orphaned || (r.SetsKnown && r.SetsComplete) {
					t.Fatalf("before a complete pass: %s orphaned %v, sets complete %v", r.Key, r.Orphaned, r.SetsComplete)
				}
			}
		}
	}

	w = quotas.NewWalker(conn, quotas.Budget{}, nil)
	res := reservations(t, walkAll(t, w))
	old, forever, young, busy := res["q:reserved:req_old"], res["q:reserved:req_forever"], res["q:reserved:req_young"], res["q:reserved:req_busy"]
	if !old.Orphaned || old.InSet != "" || old.SetsChecked != 2 || !old.SetsComplete || old.Age < 2*time.Minute+50*time.Second {
		t.Errorf("req_old %+v, want orphaned, 3m old, 2 sets checked", old)
	}
	if !forever.Orphaned {
		t.Errorf("req_forever (no TTL) %+v, want orphaned", forever)
	}
	if young.Orphaned || young.Overdue || !young.SetsKnown || young.InSet != "" {
		t.Errorf("req_young %+v, want in no set but too young", young)
	}
	if busy.Orphaned || busy.InSet != "q:conc:gk_a" || !busy.Overdue {
		t.Errorf("req_busy %+v, want in q:conc:gk_a, not orphaned", busy)
	}
	// Orphans rank after a no-TTL reservation, before the rest.
	rows := family(t, w.Snapshot(), "reservation").Rows
	if rows[0].Key != "q:reserved:req_forever" || rows[1].Key != "q:reserved:req_old" {
		t.Errorf("order %s, %s", rows[0].Key, rows[1].Key)
	}

	// The id added to a set: no longer orphaned at the next step.
	c.SAdd(ctx, "q:conc:gk_b", "req_old")
	if err := w.Step(ctx); err != nil {
		t.Fatal(err)
	}
	if r := reservations(t, w.Snapshot())["q:reserved:req_old"]; r.Orphaned || r.InSet != "q:conc:gk_b" {
		t.Errorf("req_old after SADD: %+v", r)
	}

	// More sets than the bound: whether any is orphaned is not known.
	for i := range decode.MaxConcurrencySets + 1 {
		c.SAdd(ctx, "q:conc:gk_n"+strconv.Itoa(i), "req_x")
	}
	w = quotas.NewWalker(conn, quotas.Budget{}, nil)
	res = reservations(t, walkAll(t, w))
	if r := res["q:reserved:req_forever"]; r.Orphaned || r.SetsComplete || r.SetsChecked != decode.MaxConcurrencySets {
		t.Errorf("with %d sets: %+v, want not known", decode.MaxConcurrencySets+3, r)
	}
}

// BenchmarkOrphanCheck: 60 concurrency sets of 50 in-flight requests and
// 20 reservations shown; reports the SMISMEMBER commands a step adds and
// the slowest command of the step (SLOWLOG at threshold 0).
func BenchmarkOrphanCheck(b *testing.B) {
	srv := redistest.Start(b)
	ctx := context.Background()
	c := srv.Client(0)
	c.Set(ctx, "cfg:routing:version", 1, 0)
	for s := range decode.MaxConcurrencySets {
		for m := range 50 {
			c.SAdd(ctx, "q:conc:gk_"+strconv.Itoa(s), "req_"+strconv.Itoa(s)+"_"+strconv.Itoa(m))
		}
	}
	for i := range 20 {
		c.Set(ctx, "q:reserved:req_orphan_"+strconv.Itoa(i), 1024, time.Minute)
	}
	conn := open(b, srv, "gateway")
	w := quotas.NewWalker(conn, quotas.Budget{}, nil)
	for w.Snapshot().Pass == 0 {
		if err := w.Step(ctx); err != nil {
			b.Fatal(err)
		}
	}
	c.ConfigSet(ctx, "slowlog-log-slower-than", "0")
	c.ConfigSet(ctx, "slowlog-max-len", "100000")
	c.SlowLogReset(ctx)
	before, _ := srv.CommandCalls(ctx)
	b.ResetTimer()
	for range b.N {
		if err := w.Step(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	after, _ := srv.CommandCalls(ctx)
	var slowest, slowestSM time.Duration
	var name string
	logs, _ := c.SlowLogGet(ctx, -1).Result()
	for _, l := range logs {
		if l.Duration > slowest && len(l.Args) > 0 && l.Args[0] != "slowlog" {
			slowest, name = l.Duration, l.Args[0]
		}
		if len(l.Args) > 0 && strings.EqualFold(l.Args[0], "smismember") {
			slowestSM = max(slowestSM, l.Duration)
		}
	}
	b.ReportMetric(float64(after["smismember"]-before["smismember"])/float64(b.N), "smismember/step")
	b.ReportMetric(float64(slowest.Microseconds()), "slowest-µs")
	b.ReportMetric(float64(slowestSM.Microseconds()), "slowest-smismember-µs")
	b.Logf("slowest command: %s", name)
	if r := reservations(b, w.Snapshot())["q:reserved:req_orphan_0"]; !r.Orphaned {
		b.Fatalf("not orphaned: %+v", r)
	}
}

// On the embedded demo the walk flags the seeded left-behind reservation.
func TestOrphanedReservationOnDemo(t *testing.T) {
	ctx := context.Background()
	d, err := demo.Start(ctx, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	for _, c := range d.Connections() {
		if c.Name != "gateway" {
			continue
		}
		conn, err := redisview.Open(redisview.ConnConfig{Name: "gateway", URL: c.URL}, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		conn.ForcePack(schema.BuiltinPack("gateway"))
		w := quotas.NewWalker(conn, quotas.Budget{TopN: 200}, nil)
		r := reservations(t, walkAll(t, w))["q:reserved:"+demo.OrphanReservationID]
		if !r.Orphaned || r.InSet != "" || !r.SetsComplete || r.Age < time.Minute {
			t.Fatalf("left-behind reservation: %+v", r)
		}
		return
	}
	t.Fatal("no gateway connection in the demo")
}
