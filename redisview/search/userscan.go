package search

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/schema"
)

// scanUser runs one scan within the limits: a key counts when the
// classifier puts it in one of the scan's families and that family's
// pattern holds the user's values exactly there (Pinned), so
// "ops:admin2" is never taken for "ops:admin".
func (r *UserResult) scanUser(ctx context.Context, conn *redisview.Conn, cls *schema.Classifier, s UserScan, st *ScanState, lim UserLimits, deadline time.Time) error {
	st.Started = true
	cl := conn.DB(st.DB)
	for st.Calls < lim.Calls {
		if lim.Budget != nil {
			if err := take(ctx, lim.Budget, lim.Count, deadline); err != nil {
				if ctx.Err() != nil {
					return redisview.ReadError(fmt.Sprintf("waiting for scan budget in db%d", st.DB), ctx.Err())
				}
				r.Waiting = true
				break
			}
		}
		keys, next, err := cl.Scan(ctx, st.Cursor, st.Match, lim.Count).Result()
		r.Commands++
		st.Calls++
		if err != nil {
			return redisview.ReadError(fmt.Sprintf("scanning db%d", st.DB), err)
		}
		for _, k := range keys {
			if cls == nil {
				break
			}
			fam, _ := cls.Classify(st.DB, k)
			for i, f := range s.Families {
				if f != fam || !GlobMatch(s.Globs[i], k) || !f.Pattern.Pinned(k, s.Pins[i]) {
					continue
				}
				if slices.ContainsFunc(r.Hits, func(o UserHit) bool { return o.DB == st.DB && o.Key == k }) {
					break
				}
				if lim.Cap > 0 && len(r.Hits) >= lim.Cap {
					r.Capped = true
					break
				}
				r.Hits = append(r.Hits, UserHit{Hit: Hit{DB: st.DB, Key: k, Family: f, Scan: true}, Via: join(s.Vias[i], "found by scan"), Ambiguous: s.Free[i]})
				st.Found++
				break
			}
		}
		st.Cursor = next
		if next == 0 {
			st.Done = true
			break
		}
	}
	st.Examined = min(int64(st.Calls)*lim.Count, max(st.DBKeys, 0))
	return nil
}

// describeScanned reads TYPE and PTTL of the hits found by scan (this
// read's and earlier ones'), one pipeline per database; a key gone since
// is dropped.
func (r *UserResult) describeScanned(ctx context.Context, conn *redisview.Conn) error {
	res := Result{}
	var idx []int
	for i, h := range r.Hits {
		if h.Scan {
			idx = append(idx, i)
			res.Hits = append(res.Hits, h.Hit)
		}
	}
	if len(idx) == 0 {
		return nil
	}
	if err := res.describe(ctx, conn, 0); err != nil {
		return err
	}
	r.Commands += res.Commands
	kept := map[string]Hit{}
	for _, h := range res.Hits {
		kept[strconv.Itoa(h.DB)+":"+h.Key] = h
	}
	out := r.Hits[:0]
	for _, h := range r.Hits {
		if h.Scan {
			d, ok := kept[strconv.Itoa(h.DB)+":"+h.Key]
			if !ok {
				continue
			}
			h.Hit = d
		}
		out = append(out, h)
	}
	r.Hits = out
	return nil
}
