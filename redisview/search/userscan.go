package search

import (
	"context"
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
		keys, sent, waiting, err := st.scanStep(ctx, cl, lim.Count, lim.Budget, deadline)
		if sent {
			r.Commands++
		}
		if err != nil {
			return err
		}
		if waiting {
			r.Waiting = true
			break
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
		if st.Done {
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
