package action

import (
	"testing"
	"time"
)

func TestLevelsAreCheckedOnExecute(t *testing.T) {
	f := setup(t, Options{})
	seed(t, f.db(0), "string", "k", time.Hour)
	before := f.snap(0, "k")
	pv, err := f.r.Preview(f.ctx, admin, f.conn, "delete-key", f.req(0, "k"))
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []Actor{viewer, support, {User: "", Level: Admin}, {User: "x", Level: Level(7)}} {
		_, err := f.r.Execute(f.ctx, a, f.conn, pv)
		wantErr(t, err, ErrForbidden, "")
		if rec := f.last(); rec.Outcome != OutcomeRefused || rec.User != a.User {
			t.Fatalf("audit: %+v", rec)
		}
		_, err = f.r.Preview(f.ctx, a, f.conn, "delete-key", f.req(0, "k"))
		wantErr(t, err, ErrForbidden, "")
		if f.r.Allowed(a, "delete-key") != (a.Level == Admin) {
			t.Fatalf("%+v: Allowed is wrong", a)
		}
	}
	for _, name := range []string{"delete-key", "set-ttl", "undo"} {
		if !f.r.Allowed(admin, name) || f.r.Allowed(support, name) {
			t.Fatalf("%s: levels wrong", name)
		}
	}
	if got := f.snap(0, "k"); got.dump != before.dump || got.pttl <= 0 {
		t.Fatal("key touched")
	}

	ro := New(f.audit, Options{ReadOnly: true})
	if ro.Allowed(admin, "delete-key") {
		t.Fatal("read-only allows")
	}
	_, err = ro.Execute(f.ctx, admin, f.conn, pv)
	wantErr(t, err, ErrForbidden, "read-only")
}

func TestParseLevel(t *testing.T) {
	for s, want := range map[string]Level{"viewer": Viewer, "Support": Support, " ADMIN ": Admin} {
		got, err := ParseLevel(s)
		if err != nil || got != want || got.String() != want.String() {
			t.Fatalf("ParseLevel(%q) = %v, %v", s, got, err)
		}
	}
	if _, err := ParseLevel("root"); err == nil {
		t.Fatal("root accepted")
	}
	var a Actor
	if a.Level != Viewer || !(Viewer < Support && Support < Admin) {
		t.Fatal("zero level is not the least privileged")
	}
}
