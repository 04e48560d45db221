package bulk_test

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/keydeck/keydeck/redisview/bulk"
)

var dumpCalls = regexp.MustCompile(`cmdstat_dump:calls=(\d+)`)

// dumps is how many DUMPs the target server has run.
func (f *fixture) dumps() int {
	f.t.Helper()
	m := dumpCalls.FindStringSubmatch(f.db.Info(f.ctx, "commandstats").Val())
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// Keys above the per-key cap are never DUMPed, by the count or by the
// batches: they are fingerprinted by type, expiry and length, the job
// cannot be undone (the reason names one, shown in the sample), and one
// that changed since the count is still skipped.
func TestLargeKeysNeverDumped(t *testing.T) {
	t.Parallel()
	f := setup(t)
	const limit = 16 << 10
	f.db.Set(f.ctx, "big:str", strings.Repeat("x", 2*limit), 0)
	fields := make([]any, 0, 4000)
	for i := range 2000 {
		fields = append(fields, fmt.Sprintf("field-%d", i), "some value of the field")
	}
	f.db.HSet(f.ctx, "big:hash", fields...)
	f.db.HSet(f.ctx, "big:grows", fields...)
	for i := range 5 {
		f.db.Set(f.ctx, fmt.Sprintf("big:small%d", i), "small", 0)
	}
	e := f.engine(bulk.Options{MaxKeyBytes: limit, Rate: 1_000_000})
	before := f.dumps()
	j := f.counted(e, bulk.Spec{Kind: bulk.KindDelete, Sel: bulk.Selection{DB: 0, Pattern: "big:*"}})
	if got := f.dumps() - before; got != 5 {
		t.Fatalf("the count sent %d DUMPs, want 5 (the small keys only)", got)
	}
	if j.Status != bulk.Counted || j.Count != 8 || j.Large != 3 || j.Undoable || !j.NeedsTypedCount() {
		t.Fatalf("count: %+v", j)
	}
	if !strings.Contains(j.UndoReason, strconv.Quote(j.LargeKey)) || !strings.Contains(j.UndoReason, "2 more keys") ||
		!slices.Contains(j.Sample, j.LargeKey) || j.Memory < 2*limit {
		t.Fatalf("the reason does not name the large key shown: %+v", j)
	}
	f.db.HSet(f.ctx, "big:grows", "one more", "field")
	before = f.dumps()
	if _, err := e.Start(f.ctx, admin, j.ID, j.Count); err != nil {
		t.Fatal(err)
	}
	j = f.finished(e, j.ID)
	if got := f.dumps() - before; got != 5 {
		t.Fatalf("the batches sent %d DUMPs, want 5", got)
	}
	if j.Status != bulk.Done || j.Acted != 7 || j.Changed != 1 || f.db.Exists(f.ctx, "big:str", "big:hash").Val() != 0 ||
		f.db.Exists(f.ctx, "big:grows").Val() != 1 {
		t.Fatalf("job: %+v", j)
	}
	if _, err := e.Undo(f.ctx, admin, j.ID); err == nil || errors.Is(err, bulk.ErrState) {
		t.Fatalf("undo of a job with large keys: %v", err)
	}
}
