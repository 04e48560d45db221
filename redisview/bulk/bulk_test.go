package bulk_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/redisview/bulk"
)

// A family of 100,000 keys is deleted while another client keeps writing
// new keys of it: only the keys counted go, and undo brings every one back
// with its value and its absolute expiry.
func TestDeleteFamilyWhileWritingThenUndo(t *testing.T) {
	t.Parallel()
	f := setup(t)
	const n = 100_000
	base := time.Now().Add(time.Hour).Truncate(time.Millisecond)
	f.fill("tmp:", n, base)
	e := f.engine(bulk.Options{Rate: 1_000_000, Batch: 1000, UndoKeys: 1_000_000, UndoBytes: 1 << 30})

	ctx, stop := context.WithCancel(f.ctx)
	var wrote atomic.Int64
	var after sync.Map // keys written once the count was over
	var counted atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		// An application's pace, not a tight loop that would take a core
		// from the server.
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for i := 0; ctx.Err() == nil; i++ {
			<-tick.C
			k := fmt.Sprintf("tmp:new%d", i)
			was := counted.Load()
			if f.db.Set(ctx, k, "fresh", 0).Err() == nil {
				wrote.Add(1)
				if was {
					after.Store(k, true)
				}
			}
		}
	}()
	began := time.Now()
	j := f.counted(e, family("tmp"))
	counted.Store(true)
	t.Logf("counted %d keys in %v", j.Count, time.Since(began))
	if j.Status != bulk.Counted || j.Count < n || !j.Undoable || j.Memory <= 0 || len(j.Sample) != bulk.SampleSize {
		t.Fatalf("count: %+v", j)
	}
	if _, err := e.Start(f.ctx, admin, j.ID, 0); err != nil {
		t.Fatal(err)
	}
	j = f.finished(e, j.ID)
	stop()
	<-done
	t.Logf("deleted in %v", time.Since(began))
	if j.Status != bulk.Done || j.Acted != j.Count || j.Skipped() != 0 {
		t.Fatalf("job: %+v", j)
	}
	for i := 0; i < n; i += 997 {
		if f.db.Exists(f.ctx, fmt.Sprintf("tmp:%d", i)).Val() != 0 {
			t.Fatalf("tmp:%d survived", i)
		}
	}
	kept := 0
	after.Range(func(k, _ any) bool {
		if f.db.Exists(f.ctx, k.(string)).Val() != 1 {
			t.Errorf("%s, written after the count, was deleted", k)
		}
		kept++
		return true
	})
	if kept == 0 {
		t.Fatal("the writer wrote nothing after the count")
	}

	u, err := e.Undo(f.ctx, admin, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Start(f.ctx, admin, u.ID, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Undo(f.ctx, admin, j.ID); !errors.Is(err, action.ErrNotUndoable) {
		t.Fatalf("second undo: %v", err)
	}
	u = f.finished(e, u.ID)
	t.Logf("undone in %v", time.Since(began))
	if u.Status != bulk.Done || u.Acted != j.Count || u.Skipped() != 0 {
		t.Fatalf("undo: %+v", u)
	}
	p := f.db.Pipeline()
	vals := make([]interface{ Val() string }, n)
	exps := make([]interface{ Val() time.Duration }, n)
	for i := 0; i < n; i++ {
		k := fmt.Sprintf("tmp:%d", i)
		vals[i] = p.Get(f.ctx, k)
		exps[i] = p.PExpireTime(f.ctx, k)
	}
	if _, err := p.Exec(f.ctx); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		want := base.Add(time.Duration(i) * time.Millisecond)
		if vals[i].Val() != fmt.Sprintf("vtmp:%d", i) || exps[i].Val() != time.Duration(want.UnixMilli())*time.Millisecond {
			t.Fatalf("tmp:%d restored as %q expiring %v, want expiry %v", i, vals[i].Val(), exps[i].Val(), want.UnixMilli())
		}
	}
	recs, _, err := f.runner.ReadAudit(f.ctx, action.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var intents, outcomes int
	for _, r := range recs {
		if bulk.JobOf(r) == j.ID {
			if r.Phase == action.PhaseIntent && r.Args["count"] == fmt.Sprint(j.Count) {
				intents++
			}
			if r.Phase == action.PhaseOutcome && r.Outcome == action.OutcomeOK {
				outcomes++
			}
		}
	}
	if intents != 1 || outcomes != 1 {
		t.Fatalf("audit of the job: %d intents, %d outcomes", intents, outcomes)
	}
}

// A job cancelled halfway stops; resumed by a new engine on the same
// audit Redis (Keydeck restarted), it acts on the rest, exactly once.
func TestCancelThenResumeAfterRestart(t *testing.T) {
	t.Parallel()
	f := setup(t)
	const n = 4000
	f.fill("tmp:", n, time.Time{})
	e1 := f.engine(bulk.Options{Rate: 2000, Batch: 100, UndoKeys: 1000})
	j := f.counted(e1, family("tmp"))
	if j.Count != n || j.Undoable {
		t.Fatalf("count: %+v", j)
	}
	if _, err := e1.Start(f.ctx, admin, j.ID, n); err != nil {
		t.Fatal(err)
	}
	f.wait(e1, j.ID, "a quarter done", 30*time.Second, func(j bulk.Job) bool { return j.Next >= n/4 })
	if err := e1.Cancel(f.ctx, admin, j.ID); err != nil {
		t.Fatal(err)
	}
	j = f.finished(e1, j.ID)
	if j.Status != bulk.Cancelled || j.Next >= n || j.Acted != j.Next {
		t.Fatalf("cancelled: %+v", j)
	}
	if left := f.db.DBSize(f.ctx).Val(); left != n-j.Acted {
		t.Fatalf("%d keys left after %d deleted", left, j.Acted)
	}
	e1.Close()

	e2 := f.engine(bulk.Options{Rate: 1_000_000, Batch: 100})
	if _, err := e2.Resume(f.ctx, viewer, j.ID); !errors.Is(err, action.ErrForbidden) {
		t.Fatalf("a viewer resumed: %v", err)
	}
	if _, err := e2.Resume(f.ctx, admin, j.ID); err != nil {
		t.Fatal(err)
	}
	j = f.finished(e2, j.ID)
	if j.Status != bulk.Done || j.Acted != n || j.Skipped() != 0 || f.db.DBSize(f.ctx).Val() != 0 {
		t.Fatalf("resumed: %+v, %d keys left", j, f.db.DBSize(f.ctx).Val())
	}
}

// A running job whose Keydeck stopped is taken over by another engine.
func TestRunningJobTakenOver(t *testing.T) {
	t.Parallel()
	f := setup(t)
	const n = 3000
	f.fill("tmp:", n, time.Time{})
	e1 := f.engine(bulk.Options{Rate: 1000, Batch: 100, Lease: 300 * time.Millisecond})
	j := f.counted(e1, family("tmp"))
	if _, err := e1.Start(f.ctx, admin, j.ID, n); err != nil {
		t.Fatal(err)
	}
	f.wait(e1, j.ID, "some done", 30*time.Second, func(j bulk.Job) bool { return j.Next >= 200 })
	e1.Close()
	if j, _ = e1.Job(f.ctx, j.ID); j.Status != bulk.Running {
		t.Fatalf("stopped engine left %+v", j)
	}
	// A process that died leaves its lease until it lapses.
	f.audit.Set(f.ctx, "keydeck:bulk:job:"+j.ID+":lease", "the dead one", 300*time.Millisecond)
	e2 := f.engine(bulk.Options{Rate: 1_000_000, Batch: 100, Lease: 300 * time.Millisecond})
	e2.TakeOver(f.ctx)
	if j, _ = e2.Job(f.ctx, j.ID); j.Status != bulk.Running || j.Owner == "" {
		t.Fatalf("taken over while its lease held: %+v", j)
	}
	ctx, stop := context.WithCancel(f.ctx)
	defer stop()
	go e2.Run(ctx)
	j = f.finished(e2, j.ID)
	if j.Status != bulk.Done || j.Acted != n || f.db.DBSize(f.ctx).Val() != 0 {
		t.Fatalf("taken over: %+v", j)
	}
}
