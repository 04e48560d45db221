package bulk_test

import (
	"testing"
	"time"

	"github.com/keydeck/keydeck/redisview/bulk"
)

// Two jobs of one user draw from the connection's budget as that user:
// together (their counts' reads and their writes) they take no more than
// the rate, and no job has a share of its own.
func TestJobsOfOneUserShareTheirRate(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.fill("tmp:", 100, time.Time{})
	f.fill("other:", 100, time.Time{})
	const rate = 400
	e := f.engine(bulk.Options{Rate: rate, Batch: 20})
	began := time.Now()
	a := f.counted(e, family("tmp"))
	b := f.counted(e, bulk.Spec{Kind: bulk.KindDelete, Sel: bulk.Selection{DB: 0, Pattern: "other:*"}})
	for _, j := range []bulk.Job{a, b} {
		if _, err := e.Start(f.ctx, admin, j.ID, 0); err != nil {
			t.Fatal(err)
		}
	}
	for _, j := range []bulk.Job{a, b} {
		if j = f.finished(e, j.ID); j.Acted != 100 {
			t.Fatalf("job: %+v", j)
		}
	}
	took := time.Since(began)
	granted := e.RateGranted(f.conn.Name)
	if len(granted) != 1 || granted[admin.User] != 400 {
		t.Fatalf("granted %v, want 400 keys (2 counts and 2 runs of 100) to %s alone", granted, admin.User)
	}
	// A quarter second's burst, then the rate.
	if least := time.Duration(float64(400-rate/4) / rate * float64(time.Second)); took < least {
		t.Fatalf("400 keys in %v, faster than %d keys/s (at least %v)", took, rate, least)
	}
	t.Logf("400 keys in %v", took)
}
