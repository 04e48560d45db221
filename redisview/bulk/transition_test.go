package bulk_test

import (
	"errors"
	"testing"
	"time"

	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/redisview/bulk"
)

// A second Start (a double click) that read the job still counted while
// the first ran it to the end is refused; the job is not run again.
func TestDoubleStartRefused(t *testing.T) {
	f := setup(t)
	f.fill("tmp:", 10, time.Time{})
	e := f.engine(bulk.Options{})
	j := f.counted(e, family("tmp"))
	first := true
	defer bulk.SetAfterRead(func(op string) {
		if op != "start" || !first {
			return
		}
		first = false
		if _, err := e.Start(f.ctx, admin, j.ID, 0); err != nil {
			t.Error(err)
		}
		f.finished(e, j.ID)
	})()
	if _, err := e.Start(f.ctx, admin, j.ID, 0); !errors.Is(err, bulk.ErrState) {
		t.Fatalf("the second Start: %v, want ErrState", err)
	}
	j = f.finished(e, j.ID)
	if j.Status != bulk.Done || j.Acted != 10 || j.Skipped() != 0 {
		t.Errorf("job %s: acted %d skipped %d, want done with 10 acted", j.Status, j.Acted, j.Skipped())
	}
	if got := f.records(j.ID, action.PhaseIntent); len(got) != 1 {
		t.Errorf("%d intent records, want 1", len(got))
	}
}

// A Cancel that read the job counted while a Start ran it does not write
// its stale state over the job's: it is refused once the job is done.
func TestCancelRacingStart(t *testing.T) {
	f := setup(t)
	f.fill("tmp:", 10, time.Time{})
	e := f.engine(bulk.Options{})
	j := f.counted(e, family("tmp"))
	defer bulk.SetAfterRead(func(op string) {
		if op != "cancel" {
			return
		}
		if _, err := e.Start(f.ctx, admin, j.ID, 0); err != nil {
			t.Error(err)
		}
		f.finished(e, j.ID)
	})()
	if err := e.Cancel(f.ctx, admin, j.ID); !errors.Is(err, bulk.ErrState) {
		t.Fatalf("Cancel: %v, want ErrState", err)
	}
	j = f.finished(e, j.ID)
	if j.Status != bulk.Done || j.Acted != 10 || j.Intent == "" {
		t.Errorf("job %s: acted %d intent %q, want done with 10 acted and its intent", j.Status, j.Acted, j.Intent)
	}
}

// Who cancelled and who resumed a job is in the audit stream.
func TestCancelAndResumeRecorded(t *testing.T) {
	f := setup(t)
	f.fill("tmp:", 60, time.Time{})
	e := f.engine(bulk.Options{Rate: 100, Batch: 5})
	j := f.counted(e, family("tmp"))
	if _, err := e.Start(f.ctx, admin, j.ID, 0); err != nil {
		t.Fatal(err)
	}
	bob := action.Actor{User: "bob", Level: action.Admin}
	if err := e.Cancel(f.ctx, bob, j.ID); err != nil {
		t.Fatal(err)
	}
	if j = f.finished(e, j.ID); j.Status != bulk.Cancelled {
		t.Fatalf("job %s, want cancelled", j.Status)
	}
	cy := action.Actor{User: "cy", Level: action.Admin}
	if _, err := e.Resume(f.ctx, cy, j.ID); err != nil {
		t.Fatal(err)
	}
	if j = f.finished(e, j.ID); j.Status != bulk.Done {
		t.Fatalf("job %s, want done", j.Status)
	}
	by := map[string]string{}
	for _, r := range f.records(j.ID, action.PhaseIntent) {
		if r.Args["control"] != "" {
			by[r.Args["control"]] = r.User
			if r.Ref != j.Intent || r.Action != "bulk-delete" {
				t.Errorf("%s record: ref %q action %q, want ref %q, bulk-delete", r.Args["control"], r.Ref, r.Action, j.Intent)
			}
		}
	}
	if by["cancel"] != "bob" || by["resume"] != "cy" {
		t.Errorf("recorded: %v, want cancel by bob, resume by cy", by)
	}
	cancelledBy := ""
	for _, r := range f.records(j.ID, action.PhaseOutcome) {
		if r.Outcome == action.OutcomeFailed {
			cancelledBy = r.Args["cancelled_by"]
		}
	}
	if cancelledBy != "bob" {
		t.Errorf("the cancelled outcome names %q as canceller, want bob", cancelledBy)
	}
}

// A job cancelled part way and undone is not resumed: the rest would be
// acted on with no undo possible.
func TestResumeRefusedOnceUndone(t *testing.T) {
	f := setup(t)
	f.fill("tmp:", 60, time.Time{})
	e := f.engine(bulk.Options{Rate: 100, Batch: 5})
	j := f.counted(e, family("tmp"))
	if _, err := e.Start(f.ctx, admin, j.ID, 0); err != nil {
		t.Fatal(err)
	}
	if err := e.Cancel(f.ctx, admin, j.ID); err != nil {
		t.Fatal(err)
	}
	if j = f.finished(e, j.ID); j.Status != bulk.Cancelled {
		t.Fatalf("job %s, want cancelled", j.Status)
	}
	u, err := e.Undo(f.ctx, admin, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Start(f.ctx, admin, u.ID, 0); err != nil {
		t.Fatal(err)
	}
	f.finished(e, u.ID)
	if _, err := e.Resume(f.ctx, admin, j.ID); !errors.Is(err, bulk.ErrState) {
		t.Errorf("Resume of an undone job: %v, want ErrState", err)
	}
	if n := f.db.DBSize(f.ctx).Val(); n != 60 {
		t.Errorf("%d keys after the undo, want all 60", n)
	}
}
