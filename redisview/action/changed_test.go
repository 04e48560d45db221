package action

import (
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/redistest"
)

func TestChangedBetweenPreviewAndConfirm(t *testing.T) {
	f := setup(t, Options{})
	seed(t, f.db(4), "hash", "h", 0)
	pv, err := f.r.Preview(f.ctx, admin, f.conn, "delete-key", f.req(4, "h"))
	if err != nil {
		t.Fatal(err)
	}
	if want := `DELETE "h" (hash, 12 fields, no TTL)`; pv.Summary != want {
		t.Fatalf("summary %q, want %q", pv.Summary, want)
	}
	f.db(4).HSet(f.ctx, "h", "added", "by the application")
	before := f.snap(4, "h")

	_, err = f.r.Execute(f.ctx, admin, f.conn, pv)
	wantErr(t, err, ErrChanged, "preview again")
	if f.snap(4, "h") != before {
		t.Fatal("the key was touched")
	}
	rec := f.last()
	if rec.Phase != PhaseOutcome || rec.Outcome != OutcomeFailed || rec.Ref != "" || rec.User != "ada" {
		t.Fatalf("audit: %+v", rec)
	}

	// A new TTL is a change too, even with the same value.
	pv, _ = f.r.Preview(f.ctx, admin, f.conn, "set-ttl", f.req(4, "h", "ttl", "1h"))
	f.db(4).Expire(f.ctx, "h", time.Minute)
	_, err = f.r.Execute(f.ctx, admin, f.conn, pv)
	wantErr(t, err, ErrChanged, "")
	if ttl := f.db(4).TTL(f.ctx, "h").Val(); ttl > time.Minute {
		t.Fatalf("TTL is %v: the stale preview was applied", ttl)
	}

	// A TTL merely ticking down is not a change.
	pv, _ = f.r.Preview(f.ctx, admin, f.conn, "set-ttl", f.req(4, "h", "ttl", "1h"))
	seen := f.db(4).PTTL(f.ctx, "h").Val()
	redistest.Eventually(t, 5*time.Second, "the TTL ticking down", func() bool { return f.db(4).PTTL(f.ctx, "h").Val() <= seen-10*time.Millisecond })
	if _, err := f.r.Execute(f.ctx, admin, f.conn, pv); err != nil {
		t.Fatal(err)
	}
}

// The write lands after the intent record but before EXEC: WATCH makes EXEC
// discard the whole transaction.
func TestChangedWhileCommitting(t *testing.T) {
	f := setup(t, Options{})
	seed(t, f.db(0), "list", "l", time.Hour)
	f.r.opts.beforeExec = func() { f.db(0).RPush(f.ctx, "l", "late") }
	pv, err := f.r.Preview(f.ctx, admin, f.conn, "delete-key", f.req(0, "l"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.r.Execute(f.ctx, admin, f.conn, pv)
	wantErr(t, err, ErrChanged, "nothing was changed")
	if n := f.db(0).LLen(f.ctx, "l").Val(); n != 5 {
		t.Fatalf("list has %d items, want the 4 seeded + 1 late", n)
	}
	recs := f.records()
	intent, out := recs[len(recs)-2], recs[len(recs)-1]
	if intent.Phase != PhaseIntent || out.Ref != intent.ID || out.Outcome != OutcomeFailed || len(out.Targets) != 0 {
		t.Fatalf("audit:\n%+v\n%+v", intent, out)
	}
}
