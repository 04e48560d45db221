package search

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/schema"
)

// scanStep is one budgeted SCAN call of st, for a search and a user
// page alike: it takes COUNT keys from budget first (nil: not paced),
// waiting at most until deadline, then sends SCAN from st's cursor and
// moves the cursor on (Done when it is back at 0). waiting: the budget
// had none left in time, and nothing was sent; sent: a SCAN went to the
// server (st.Calls counts it).
func (st *ScanState) scanStep(ctx context.Context, c redis.Cmdable, count int64, budget Budget, deadline time.Time) (keys []string, sent, waiting bool, err error) {
	if budget != nil {
		wctx, cancel := context.WithDeadline(ctx, deadline)
		err := budget.Take(wctx, count)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return nil, false, false, redisview.ReadError(fmt.Sprintf("waiting for scan budget in db%d", st.DB), ctx.Err())
			}
			return nil, false, true, nil
		}
	}
	keys, next, err := redisview.ScanStep(ctx, c, st.Cursor, st.Match, count, "")
	st.Calls++
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
