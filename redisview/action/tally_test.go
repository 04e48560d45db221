package action

import (
	"maps"
	"testing"
)

// The runner counts what it settles by kind and outcome — ok, refused
// (a role below the kind's) — and never an unknown kind's name.
func TestTallyCountsSettledOutcomes(t *testing.T) {
	f := setup(t, Options{})
	f.db(0).Set(f.ctx, "h", "v", 0)
	f.db(0).Set(f.ctx, "g", "v", 0)
	f.mustRun(admin, "delete-key", f.req(0, "h"))
	pv, err := f.r.Preview(f.ctx, admin, f.conn, "delete-key", f.req(0, "g"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.r.Execute(f.ctx, viewer, f.conn, pv); err == nil {
		t.Fatal("a viewer deleted a key")
	}
	pv.Kind = "no-such-kind"
	if _, err := f.r.Execute(f.ctx, admin, f.conn, pv); err == nil {
		t.Fatal("an unknown kind ran")
	}
	want := map[KindOutcome]int64{{"delete-key", OutcomeOK}: 1, {"delete-key", OutcomeRefused}: 1}
	if got := f.r.Tally(); !maps.Equal(got, want) {
		t.Fatalf("tally %v, want %v", got, want)
	}
}
