package decode_test

import (
	"context"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/demo"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview/decode"
)

func TestOverdue(t *testing.T) {
	f := gatewayPack.Family("reservation")
	for _, c := range []struct {
		pttl time.Duration
		want bool
	}{
		{-1, true},                             // no TTL
		{5 * time.Minute, false},               // just written
		{4*time.Minute + 1*time.Second, false}, // 59 s old
		{3 * time.Minute, true},                // 2 m old
		{6 * time.Minute, false},               // TTL above the pack's maximum: age unknown
	} {
		if got := decode.Overdue(f, c.pttl); got != c.want {
			t.Errorf("pttl %v: overdue %v, want %v", c.pttl, got, c.want)
		}
	}
}

// The key page's reservation says orphaned only when no concurrency set of
// the database holds its request id, and it is overdue.
func TestReservationOrphan(t *testing.T) {
	db := redistest.Start(t).Client(0)
	ctx := context.Background()
	env := decode.Env{Pack: gatewayPack}
	db.SAdd(ctx, "q:conc:k1", "req_busy")
	db.SAdd(ctx, "q:conc:k2", "req_other")
	db.Set(ctx, "q:reserved:req_busy", 1, time.Minute)
	db.Set(ctx, "q:reserved:req_left", 1, 2*time.Minute)
	db.Set(ctx, "q:reserved:req_new", 1, 5*time.Minute)
	for key, want := range map[string]struct {
		orphaned bool
		inSet    string
	}{"q:reserved:req_busy": {false, "q:conc:k1"}, "q:reserved:req_left": {true, ""}, "q:reserved:req_new": {false, ""}} {
		r := decode.As[decode.Reservation](gwDec(t, db, key, env))
		if r == nil || !r.Checked || !r.SetsComplete || r.SetsChecked != 2 || r.Orphaned != want.orphaned || r.InSet != want.inSet {
			t.Errorf("%s: %+v, want orphaned %v in %q", key, r, want.orphaned, want.inSet)
		}
	}
	// Without the pack nothing is claimed.
	if r := decode.As[decode.Reservation](gwDec(t, db, "q:reserved:req_left", decode.Env{})); r.Checked || r.Orphaned {
		t.Errorf("without a pack: %+v", r)
	}
	// More sets than the bound: not known.
	for i := range decode.MaxConcurrencySets + 1 {
		db.SAdd(ctx, "q:conc:n"+strconv.Itoa(i), "x")
	}
	if r := decode.As[decode.Reservation](gwDec(t, db, "q:reserved:req_left", env)); r.SetsComplete || r.Orphaned || r.SetsChecked != decode.MaxConcurrencySets {
		t.Errorf("over the bound: %+v", r)
	}
}

// On the embedded demo the seeded left-behind reservation is orphaned.
func TestReservationOrphanOnDemo(t *testing.T) {
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
		opts, _ := redis.ParseURL(c.URL)
		opts.DisableIdentity = true
		cl := redis.NewClient(opts)
		t.Cleanup(func() { cl.Close() })
		r := decode.As[decode.Reservation](gwDec(t, cl, "q:reserved:"+demo.OrphanReservationID, decode.Env{Pack: gatewayPack}))
		if r == nil || !r.Orphaned || r.SetsChecked == 0 {
			t.Fatalf("demo's left-behind reservation: %+v", r)
		}
		return
	}
	t.Fatal("no gateway connection in the demo")
}
