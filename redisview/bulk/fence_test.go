package bulk_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/clock"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/redisview/bulk"
)

// Engine e1 stalls in a batch's rate wait (its clock stands still) past
// its lease; e2 takes the job over and finishes it. When e1 wakes it
// writes nothing: no results, no second outcome record.
func TestStalledEngineFencedOffAfterTakeover(t *testing.T) {
	f := setup(t)
	const n = 40
	f.fill("tmp:", n, time.Time{})
	stalled := clock.NewFake(time.Now())
	var log syncBuffer
	e1 := f.engine(bulk.Options{Rate: 10, Batch: 20, Lease: 300 * time.Millisecond, Clock: stalled,
		Log: slog.New(slog.NewTextHandler(&log, nil))})
	// Counted elsewhere: a count pays its reads from the budget, which
	// e1's clock, standing still, would never refill.
	j := f.counted(f.engine(bulk.Options{Rate: 1_000_000}), family("tmp"))
	if _, err := e1.Start(f.ctx, admin, j.ID, 0); err != nil {
		t.Fatal(err)
	}
	f.wait(e1, j.ID, "the first batch", 10*time.Second, func(j bulk.Job) bool { return j.Next == 20 })
	redistest.Eventually(t, 10*time.Second, "e1 waiting on its rate budget", func() bool {
		for _, d := range stalled.Deadlines() {
			if d > time.Second {
				return true
			}
		}
		return false
	})
	e2 := f.engine(bulk.Options{Rate: 1_000_000, Batch: 20, Lease: 300 * time.Millisecond})
	ctx, stop := context.WithCancel(f.ctx)
	defer stop()
	go e2.Run(ctx)
	if j = f.finished(e2, j.ID); j.Status != bulk.Done {
		t.Fatalf("e2 left the job %s: %s", j.Status, j.Error)
	}
	stalled.Advance(10 * time.Second) // e1 wakes
	redistest.Eventually(t, 10*time.Second, "e1 to stop on its lost lease", func() bool {
		return strings.Contains(log.String(), "lease was lost")
	})
	e1.Close()
	e2.Close()

	j, err := e2.Job(f.ctx, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	skipped := f.audit.LLen(f.ctx, "keydeck:bulk:job:"+j.ID+":skipped").Val()
	if j.Status != bulk.Done || j.Acted != n || j.Skipped() != 0 || skipped != 0 {
		t.Errorf("job %s: acted %d, skipped %d (%d recorded); want %d acted by the two engines in turn", j.Status, j.Acted, j.Skipped(), skipped, n)
	}
	if p := f.audit.LLen(f.ctx, "keydeck:bulk:job:"+j.ID+":priors").Val(); p != n {
		t.Errorf("%d priors recorded, want %d", p, n)
	}
	if got := f.records(j.ID, action.PhaseOutcome); len(got) != 1 {
		t.Errorf("%d outcome records, want 1", len(got))
	}
}

// records are the audit records of job id in phase.
func (f *fixture) records(id, phase string) []action.Record {
	f.t.Helper()
	recs, _, err := f.runner.ReadAudit(f.ctx, action.Filter{})
	if err != nil {
		f.t.Fatal(err)
	}
	var out []action.Record
	for _, r := range recs {
		if bulk.JobOf(r) == id && r.Phase == phase {
			out = append(out, r)
		}
	}
	return out
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
