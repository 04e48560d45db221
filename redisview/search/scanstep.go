package search

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/schema"
)

// scanStep is one budgeted SCAN step of st (a SCAN call, one per primary
// on a cluster), for a search and a user page alike: it takes COUNT keys
// per SCAN from budget first (nil: not paced),
// waiting at most until deadline, then sends SCAN from st's cursor and
// moves the cursor on (Done when it is back at 0). waiting: the budget
// had none left in time, and nothing was sent; sent: a SCAN went to the
// server (st.Calls counts each SCAN).
func (st *ScanState) scanStep(ctx context.Context, c redis.Cmdable, count int64, budget Budget, deadline time.Time) (keys []string, sent, waiting bool, err error) {
	// The step scans count keys on each node it reaches (each primary
	// of a cluster): the budget and st.Calls count each.
	width, err := redisview.StepWidth(ctx, c, st.Cursor)
	switch {
	case errors.Is(err, redisview.ErrBadCursor): // a continue link of another kind of deployment
		return nil, false, false, fmt.Errorf("%w: %w", ErrCursors, err)
	case err != nil: // CLUSTER SLOTS could not be read: Redis's, not the link's
		return nil, false, false, redisview.ReadError(fmt.Sprintf("reading the cluster's primaries for db%d", st.DB), err)
	}
	if budget != nil {
		wctx, cancel := context.WithDeadline(ctx, deadline)
		err := budget.Take(wctx, count*int64(width))
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return nil, false, false, redisview.ReadError(fmt.Sprintf("waiting for scan budget in db%d", st.DB), ctx.Err())
			}
			return nil, false, true, nil
		}
	}
	keys, next, err := redisview.ScanStep(ctx, c, st.Cursor, st.Match, count, "")
	st.Calls += width
	if err != nil {
		return nil, true, false, redisview.ReadError(fmt.Sprintf("scanning db%d", st.DB), err)
	}
	st.Cursor, st.Done = next, next.Done()
	return keys, true, false, nil
}

// accept decides whether a key SCAN returned is a result of this scan.
func (st *ScanState) accept(cls *schema.Classifier, key string) (Hit, bool) {
	h := Hit{DB: st.DB, Key: key, Scan: true}
	var fam *schema.Family
	if cls != nil {
		fam, _ = cls.Classify(st.DB, key)
	}
	if st.Families == nil { // a glob: every key SCAN MATCH returns
		h.Family = fam
		return h, true
	}
	for i, f := range st.Families {
		if f == fam && GlobMatch(st.Globs[i], key) {
			h.Family = f
			return h, true
		}
	}
	return h, false
}
