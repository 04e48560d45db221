package quotas_test

import (
	"context"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/quotas"
	"github.com/keydeck/keydeck/redisview/schema"
)

// gatewayWith is the gateway pack (a fresh copy) with families ids
// marked sensitive.
func gatewayWith(t *testing.T, ids ...string) *schema.Pack {
	t.Helper()
	p, err := schema.BuiltinPack("gateway").With(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		p.Family(id).Sensitive = true
	}
	return p
}

// A key's reservations of a sensitive reservation family are never read
// on the gateway key page (TTL only, "hidden: sensitive"), and sensitive
// concurrency sets are never looked in for an orphan check: whether a
// reservation is orphaned is then not known, rather than claimed.
func TestSensitiveReservationsAndSets(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	c := srv.Client(0)
	now := time.Now()
	c.Set(ctx, "cfg:routing:version", 1, 0)
	c.Set(ctx, "q:reserved:req_a", 4096, 2*time.Minute) // 3m old
	c.SAdd(ctx, "q:conc:gk_1", "req_a", "req_b")
	c.Expire(ctx, "q:conc:gk_1", 5*time.Minute)

	conn := open(t, srv, "gateway")
	conn.ForcePack(gatewayWith(t, "reservation"))
	before, _ := srv.CommandCalls(ctx)
	st, err := quotas.ReadSubject(ctx, conn, "gk_1", now)
	if err != nil {
		t.Fatal(err)
	}
	after, _ := srv.CommandCalls(ctx)
	// The two budgets' (this month's, last month's) STRLEN and GETRANGE;
	// none of the reservations'.
	if n := after["getrange"] - before["getrange"] + after["strlen"] - before["strlen"]; n != 4 {
		t.Errorf("%d GETRANGE/STRLEN sent, want the budgets' 4: sensitive reservations read", n)
	}
	if len(st.Reservations) != 2 {
		t.Fatalf("reservations %+v", st.Reservations)
	}
	for _, r := range st.Reservations {
		if r.Amount != "" || !r.Gone && r.Note != "hidden: sensitive" {
			t.Errorf("reservation %s: amount %q, note %q", r.Key, r.Amount, r.Note)
		}
	}

	// The concurrency sets sensitive: no SCAN finds them, no SMISMEMBER
	// looks in them, and no reservation is called orphaned.
	conn.ForcePack(gatewayWith(t, "concurrency"))
	before, _ = srv.CommandCalls(ctx)
	sets, complete, err := decode.FindConcurrencySets(ctx, conn.DB(0), conn.Pack(), 0)
	if err != nil || len(sets) != 0 || complete {
		t.Errorf("sets %v, complete %v, err %v; want none, not complete", sets, complete, err)
	}
	w := quotas.NewWalker(conn, quotas.Budget{}, nil)
	snap := walkAll(t, w)
	after, _ = srv.CommandCalls(ctx)
	if n := after["smismember"] - before["smismember"] + after["sismember"] - before["sismember"] + after["sscan"] - before["sscan"]; n != 0 {
		t.Errorf("%d SMISMEMBER/SISMEMBER/SSCAN sent on sensitive concurrency sets", n)
	}
	for _, r := range reservations(t, snap) {
		if r.Orphaned || r.SetsComplete {
			t.Errorf("%s: orphaned %v, sets complete %v; want not known", r.Key, r.Orphaned, r.SetsComplete)
		}
	}
}
