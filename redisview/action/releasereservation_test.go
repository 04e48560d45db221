package action

import (
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/demo"
	"github.com/keydeck/keydeck/redisview/schema"
)

// gatewayState seeds two concurrency sets and four reservations on db 0:
// old (TTL 2m of 5m: 3m old, in no set) and forever (no TTL, in no set)
// are orphaned; young (30s old, in no set) and busy (4m old, in a set)
// are not.
func gatewayState(t *testing.T) *fixture {
	f := setup(t, Options{})
	f.conn.ForcePack(schema.BuiltinPack("gateway"))
	c := f.db(0)
	c.Set(f.ctx, "cfg:routing:version", 1, 0)
	c.SAdd(f.ctx, "q:conc:gk_a", "req_a1", "req_busy")
	c.Expire(f.ctx, "q:conc:gk_a", 5*time.Minute)
	c.SAdd(f.ctx, "q:conc:gk_b", "req_b1")
	c.Expire(f.ctx, "q:conc:gk_b", 5*time.Minute)
	c.Set(f.ctx, "q:reserved:req_old", 4096, 2*time.Minute)
	c.Set(f.ctx, "q:reserved:req_forever", 8192, 0)
	c.Set(f.ctx, "q:reserved:req_young", 512, 4*time.Minute+30*time.Second)
	c.Set(f.ctx, "q:reserved:req_busy", 1024, time.Minute)
	return f
}

func TestReleaseReservationRoundTrip(t *testing.T) {
	f := gatewayState(t)
	const key = "q:reserved:req_old"
	sets := map[string]snap{"q:conc:gk_a": f.snap(0, "q:conc:gk_a"), "q:conc:gk_b": f.snap(0, "q:conc:gk_b")}
	before := map[string]snap{key: f.snap(0, key)}
	pv, err := f.r.Preview(f.ctx, admin, f.conn, KindReleaseReservation, f.req(0, key))
	if err != nil {
		t.Fatal(err)
	}
	if len(pv.Changes) != 3 || pv.Changes[0].Op != "delete" || pv.Changes[1].Op != "none" || pv.Changes[2].Op != "none" {
		t.Fatalf("changes %+v", pv.Changes)
	}
	mustContain(t, "summary", pv.Summary, "RELEASE RESERVATION", "req_old", "in none of the 2 concurrency sets", "about 3m")
	// Another request starting meanwhile, in a set previewed or in a set
	// created since, is no reason to refuse.
	f.db(0).SAdd(f.ctx, "q:conc:gk_a", "req_new")
	f.db(0).SAdd(f.ctx, "q:conc:gk_c", "req_c1")
	sets["q:conc:gk_a"] = f.snap(0, "q:conc:gk_a")
	if _, err := f.r.Execute(f.ctx, admin, f.conn, pv); err != nil {
		t.Fatal(err)
	}
	if f.db(0).Exists(f.ctx, key).Val() != 0 {
		t.Fatal("the reservation is still there")
	}
	if rec := f.last(); rec.Action != KindReleaseReservation || len(rec.Keys) != 3 || rec.Keys[0] != key {
		t.Fatalf("audit %+v", rec)
	}
	// The application goes on: a request ends, its id leaves a set. Undo
	// puts the reservation back with its TTL and leaves the sets alone.
	f.db(0).SRem(f.ctx, "q:conc:gk_b", "req_b1")
	f.undoAndCheck(0, before)
	if f.db(0).SIsMember(f.ctx, "q:conc:gk_b", "req_b1").Val() || f.db(0).Exists(f.ctx, "q:conc:gk_b").Val() != 0 {
		t.Fatal("undo put an old copy of a concurrency set back")
	}
	if got := f.snap(0, "q:conc:gk_a"); got.dump != sets["q:conc:gk_a"].dump {
		t.Fatal("a concurrency set changed")
	}

	// The no-TTL reservation is orphaned whatever its age.
	f.mustRun(admin, KindReleaseReservation, f.req(0, "q:reserved:req_forever"))
	if f.db(0).Exists(f.ctx, "q:reserved:req_forever").Val() != 0 {
		t.Fatal("no-TTL reservation not released")
	}
	f.mustRun(admin, KindUndo, UndoRequest(f.last()))
	if d := f.db(0).PTTL(f.ctx, "q:reserved:req_forever").Val(); d != -1 {
		t.Fatalf("restored with PTTL %v, want none", d)
	}
}

func TestReleaseReservationRefuses(t *testing.T) {
	f := gatewayState(t)
	// The request id added to a set after the preview.
	pv, err := f.r.Preview(f.ctx, admin, f.conn, KindReleaseReservation, f.req(0, "q:reserved:req_forever"))
	if err != nil {
		t.Fatal(err)
	}
	f.db(0).SAdd(f.ctx, "q:conc:gk_b", "req_forever")
	_, err = f.r.Execute(f.ctx, admin, f.conn, pv)
	wantErr(t, err, ErrChanged, "")
	// Now in a set: not orphaned, refused at preview.
	_, err = f.r.Preview(f.ctx, admin, f.conn, KindReleaseReservation, f.req(0, "q:reserved:req_forever"))
	wantErr(t, err, ErrInvalid, `request "req_forever" is in concurrency set "q:conc:gk_b"`)
	f.db(0).SRem(f.ctx, "q:conc:gk_b", "req_forever")

	// A new concurrency set created after the preview.
	pv, err = f.r.Preview(f.ctx, admin, f.conn, KindReleaseReservation, f.req(0, "q:reserved:req_forever"))
	if err != nil {
		t.Fatal(err)
	}
	f.db(0).SAdd(f.ctx, "q:conc:gk_new", "req_forever")
	_, err = f.r.Execute(f.ctx, admin, f.conn, pv)
	wantErr(t, err, ErrChanged, `now in concurrency set "q:conc:gk_new", created since the preview`)
	if f.db(0).Exists(f.ctx, "q:reserved:req_forever").Val() != 1 {
		t.Fatal("released")
	}

	f.db(0).Del(f.ctx, "q:conc:gk_new")
	// A set argument naming something else is refused.
	_, err = f.r.Preview(f.ctx, admin, f.conn, KindReleaseReservation, f.req(0, "q:reserved:req_forever", ArgSets, `["q:tokens:gk_a:202612"]`))
	wantErr(t, err, ErrInvalid, "not a concurrency set")
	// Naming fewer sets than exist does not skip the others.
	_, err = f.r.Preview(f.ctx, admin, f.conn, KindReleaseReservation, f.req(0, "q:reserved:req_busy", ArgSets, `["q:conc:gk_b"]`))
	wantErr(t, err, ErrChanged, `"q:conc:gk_a"`)

	// Not orphaned: in a set; too young.
	_, err = f.r.Preview(f.ctx, admin, f.conn, KindReleaseReservation, f.req(0, "q:reserved:req_busy"))
	wantErr(t, err, ErrInvalid, "is in concurrency set")
	_, err = f.r.Preview(f.ctx, admin, f.conn, KindReleaseReservation, f.req(0, "q:reserved:req_young"))
	wantErr(t, err, ErrInvalid, "not orphaned")
	// Not a reservation.
	_, err = f.r.Preview(f.ctx, admin, f.conn, KindReleaseReservation, f.req(0, "q:conc:gk_a"))
	wantErr(t, err, ErrInvalid, "applies only to reservations")
	// Support cannot.
	_, err = f.r.Preview(f.ctx, support, f.conn, KindReleaseReservation, f.req(0, "q:reserved:req_old"))
	wantErr(t, err, ErrForbidden, "admin")
	if f.r.Allowed(support, KindReleaseReservation) || !f.r.Allowed(admin, KindReleaseReservation) {
		t.Fatal("Allowed")
	}
	if f.db(0).Exists(f.ctx, "q:reserved:req_busy", "q:reserved:req_young", "q:reserved:req_old").Val() != 3 {
		t.Fatal("a refused release deleted something")
	}
}

func TestReleaseReservationAppliesTo(t *testing.T) {
	p := schema.BuiltinPack("gateway")
	for id, want := range map[string]bool{"reservation": true, "concurrency": false, "monthly-tokens": false} {
		if got := AppliesTo(ReleaseReservation{}, p.Family(id)); got != want {
			t.Errorf("%s: %v", id, got)
		}
	}
}

// On the embedded demo, with its simulator running, the seeded no-TTL
// reservation is orphaned: released and restored as on real Redis.
func TestReleaseReservationOnEmbeddedDemo(t *testing.T) {
	f := setup(t, Options{})
	d, err := demo.Start(f.ctx, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	var url string
	for _, c := range d.Connections() {
		if c.Name == "gateway" {
			url = c.URL
		}
	}
	f.conn = f.open(url)
	f.conn.ForcePack(schema.BuiltinPack("gateway"))
	opts, _ := redis.ParseURL(url)
	opts.DisableIdentity = true
	c := redis.NewClient(opts)
	t.Cleanup(func() { c.Close() })
	var key string
	iter := c.Scan(f.ctx, 0, "q:reserved:*", 1000).Iterator()
	for iter.Next(f.ctx) {
		if c.PTTL(f.ctx, iter.Val()).Val() == -1 {
			key = iter.Val()
		}
	}
	if key == "" {
		t.Fatal("the demo has no reservation without a TTL")
	}
	// The simulator writes the concurrency sets all the time: a write
	// between preview and confirm refuses, as it must; try a few times.
	var out Outcome
	for range 10 {
		if out, err = f.run(admin, KindReleaseReservation, f.req(0, key)); !errors.Is(err, ErrChanged) {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	if c.Exists(f.ctx, key).Val() != 0 || !out.Undoable {
		t.Fatalf("not released (undoable %v)", out.Undoable)
	}
	f.mustRun(admin, KindUndo, UndoRequest(f.last()))
	if c.Exists(f.ctx, key).Val() != 1 || c.PTTL(f.ctx, key).Val() != -1 {
		t.Fatal("undo did not restore it without a TTL")
	}
}
