package bulk_test

import (
	"testing"
	"time"

	"github.com/keydeck/keydeck/redisview/bulk"
)

// A batch recorded in flight whose EXEC never ran (Keydeck stopped, or
// the reply was lost), then a key the application wrote: on the next run
// that key is skipped as changed, not counted as acted on, and the undo
// leaves the application's write alone.
func TestInFlightKeyWrittenByTheAppIsSkipped(t *testing.T) {
	f := setup(t)
	f.fill("tmp:", 3, time.Time{})
	e := f.engine(bulk.Options{})
	j := f.counted(e, family("tmp"))
	if err := e.PlantInFlight(f.ctx, j.ID, "tmp:0"); err != nil {
		t.Fatal(err)
	}
	f.db.Set(f.ctx, "tmp:0", "app wrote this", 0)
	if _, err := e.Start(f.ctx, admin, j.ID, 0); err != nil {
		t.Fatal(err)
	}
	j = f.finished(e, j.ID)
	if j.Status != bulk.Done || j.Acted != 2 || j.Changed != 1 {
		t.Fatalf("job %s: acted %d changed %d gone %d other %d; want 2 acted, tmp:0 changed", j.Status, j.Acted, j.Changed, j.Gone, j.Other)
	}
	u, err := e.Undo(f.ctx, admin, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Start(f.ctx, admin, u.ID, 0); err != nil {
		t.Fatal(err)
	}
	if u = f.finished(e, u.ID); u.Acted != 2 {
		t.Errorf("undo restored %d keys, want the 2 the job deleted", u.Acted)
	}
	if v := f.db.Get(f.ctx, "tmp:0").Val(); v != "app wrote this" {
		t.Errorf("tmp:0 = %q, want the application's write kept", v)
	}
	if v := f.db.Get(f.ctx, "tmp:1").Val(); v != "vtmp:1" {
		t.Errorf("tmp:1 = %q, want it restored", v)
	}
}

// A batch whose EXEC ran but whose results were never settled: the key is
// in exactly the state the write leaves, so it counts as acted on, with
// the prior recorded before the EXEC, and the undo restores it.
func TestInFlightKeyTheBatchWroteIsActed(t *testing.T) {
	f := setup(t)
	f.fill("tmp:", 3, time.Time{})
	e := f.engine(bulk.Options{})
	j := f.counted(e, family("tmp"))
	if err := e.PlantInFlight(f.ctx, j.ID, "tmp:0"); err != nil {
		t.Fatal(err)
	}
	f.db.Unlink(f.ctx, "tmp:0") // what the batch's EXEC did
	if _, err := e.Start(f.ctx, admin, j.ID, 0); err != nil {
		t.Fatal(err)
	}
	j = f.finished(e, j.ID)
	if j.Status != bulk.Done || j.Acted != 3 || j.Skipped() != 0 {
		t.Fatalf("job %s: acted %d skipped %d; want all 3 acted", j.Status, j.Acted, j.Skipped())
	}
	u, err := e.Undo(f.ctx, admin, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Start(f.ctx, admin, u.ID, 0); err != nil {
		t.Fatal(err)
	}
	f.finished(e, u.ID)
	for _, k := range []string{"tmp:0", "tmp:1", "tmp:2"} {
		if v := f.db.Get(f.ctx, k).Val(); v != "v"+k {
			t.Errorf("%s = %q after the undo, want %q", k, v, "v"+k)
		}
	}
}
