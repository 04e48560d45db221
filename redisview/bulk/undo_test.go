package bulk_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/redisview/bulk"
)

// An undo preview cancelled (or left) does not make the job un-undoable:
// the original is claimed when an undo starts, and only then.
func TestCancelledUndoPreviewLeavesUndo(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.fill("tmp:", 30, time.Time{})
	e := f.engine(bulk.Options{})
	j := f.counted(e, family("tmp"))
	if _, err := e.Start(f.ctx, admin, j.ID, 0); err != nil {
		t.Fatal(err)
	}
	j = f.finished(e, j.ID)
	u1, err := e.Undo(f.ctx, admin, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Cancel(f.ctx, admin, u1.ID); err != nil {
		t.Fatal(err)
	}
	if j, _ = e.Job(f.ctx, j.ID); j.UndoneBy != "" {
		t.Fatalf("claimed by a preview: %+v", j)
	}
	u2, err := e.Undo(f.ctx, admin, j.ID)
	if err != nil {
		t.Fatalf("undo after a cancelled undo preview: %v", err)
	}
	u3, err := e.Undo(f.ctx, admin, j.ID) // a second preview, started too late
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Start(f.ctx, admin, u2.ID, 0); err != nil {
		t.Fatal(err)
	}
	if u2 = f.finished(e, u2.ID); u2.Status != bulk.Done || u2.Acted != 30 || f.db.DBSize(f.ctx).Val() != 30 {
		t.Fatalf("undo: %+v", u2)
	}
	if _, err := e.Start(f.ctx, admin, u3.ID, 0); !errors.Is(err, action.ErrNotUndoable) {
		t.Fatalf("a second undo started: %v", err)
	}
	if j, _ = e.Job(f.ctx, j.ID); j.UndoneBy != u2.ID {
		t.Fatalf("undone by %q, want %q", j.UndoneBy, u2.ID)
	}
}

// A job cancelled part way and undone is not resumed: it would act on
// the rest with no undo.
func TestNoResumeAfterUndo(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.fill("tmp:", 400, time.Time{})
	e := f.engine(bulk.Options{Rate: 200, Batch: 10})
	j := f.counted(e, family("tmp"))
	if _, err := e.Start(f.ctx, admin, j.ID, 0); err != nil {
		t.Fatal(err)
	}
	f.wait(e, j.ID, "some done", 30*time.Second, func(j bulk.Job) bool { return j.Acted >= 20 })
	if err := e.Cancel(f.ctx, admin, j.ID); err != nil {
		t.Fatal(err)
	}
	j = f.finished(e, j.ID)
	u, err := e.Undo(f.ctx, admin, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Start(f.ctx, admin, u.ID, 0); err != nil {
		t.Fatal(err)
	}
	f.finished(e, u.ID)
	if _, err := e.Resume(f.ctx, admin, j.ID); !errors.Is(err, bulk.ErrState) || !strings.Contains(err.Error(), "undone") {
		t.Fatalf("resumed after its undo: %v", err)
	}
	if n := f.db.DBSize(f.ctx).Val(); n != 400 {
		t.Fatalf("%d keys, want all 400 back", n)
	}
}

// Undo of a TTL that fired restores the keys it removed from their
// recorded prior (with their prior expiry), skips one whose own prior
// expiry has passed, and one created again since. The job read each
// value once (its state after is the value it found).
func TestUndoExpireAfterTheTTLFired(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.fill("tmp:", 4, time.Time{})
	later := time.Now().Add(time.Hour).Truncate(time.Millisecond)
	f.db.PExpireAt(f.ctx, "tmp:2", later)
	priorPassed := time.Now().Add(700 * time.Millisecond)
	f.db.PExpireAt(f.ctx, "tmp:3", priorPassed)
	e := f.engine(bulk.Options{})
	j := f.counted(e, bulk.Spec{Kind: bulk.KindExpire, TTL: 200 * time.Millisecond, Sel: bulk.Selection{DB: 0, Family: "tmp"}})
	before := f.dumps()
	if _, err := e.Start(f.ctx, admin, j.ID, 0); err != nil {
		t.Fatal(err)
	}
	if j = f.finished(e, j.ID); j.Acted != 4 || !j.Undoable {
		t.Fatalf("job: %+v", j)
	}
	if got := f.dumps() - before; got != 4 {
		t.Fatalf("the batch sent %d DUMPs for 4 keys, want one each", got)
	}
	redistest.Eventually(t, 10*time.Second, "the TTLs fired, and tmp:3's prior expiry passed", func() bool {
		return f.db.Exists(f.ctx, "tmp:0", "tmp:1", "tmp:2", "tmp:3").Val() == 0 && time.Now().After(priorPassed)
	})
	f.db.Set(f.ctx, "tmp:1", "created again", 0)
	u, err := e.Undo(f.ctx, admin, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Start(f.ctx, admin, u.ID, 0); err != nil {
		t.Fatal(err)
	}
	if u = f.finished(e, u.ID); u.Acted != 2 || u.Skipped() != 2 {
		t.Fatalf("undo: %+v", u)
	}
	if f.db.Get(f.ctx, "tmp:0").Val() != "vtmp:0" || f.db.PTTL(f.ctx, "tmp:0").Val() != -1 ||
		f.db.Get(f.ctx, "tmp:2").Val() != "vtmp:2" || f.db.PExpireTime(f.ctx, "tmp:2").Val() != time.Duration(later.UnixMilli())*time.Millisecond ||
		f.db.Get(f.ctx, "tmp:1").Val() != "created again" || f.db.Exists(f.ctx, "tmp:3").Val() != 0 {
		t.Fatal("not restored as before the TTL")
	}
}
