package quotas_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/quotas"
)

func reservations(t *testing.T, s quotas.Snapshot) map[string]quotas.Row {
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
