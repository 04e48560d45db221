package stats

import (
	"cmp"
	"slices"
	"time"
)

// liveRefresh is how old a pass may grow while keyspace events keep its
// counts current: memory, TTLs and violations are the pass's, and time to
// live moves on without events.
const liveRefresh = time.Hour

// liveFresh says whether the last pass's counts, kept current by events,
// still hold (s.mu held): the events were all heard, the pass is younger
// than liveRefresh, and the kept total agrees with INFO keyspace's.
func (s *Sweeper) liveFresh(sig signature) bool {
	if s.live == nil || s.clock.Since(s.last.finished) >= liveRefresh {
		return false
	}
	s.live.FlagsFrom(s.conn.Keyspace())
	if ok, _, _ := s.live.Live(); !ok {
		return false
	}
	drift, _ := s.live.Drifted(s.last.seen, sig.keys)
	return !drift
}

// liveDetail adds to a completed pass's counts the keys created and
// deleted since, while keyspace events keep them (s.mu held); else it says
// why they do not.
func (s *Sweeper) liveDetail(d *DBDetail) {
	if s.live == nil {
		d.CountsWhy = "this process shows the passes of the replica that sweeps the database"
		return
	}
	s.live.FlagsFrom(s.conn.Keyspace())
	ok, since, why := s.live.Live()
	if !ok || s.last == nil || d.Estimated {
		d.CountsWhy = why
		return
	}
	fams, unmatched, _ := s.live.Deltas()
	for i := range d.Families {
		f := &d.Families[i]
		f.Count = max(f.Count+fams[f.Family], 0)
		delete(fams, f.Family)
	}
	for f, n := range fams {
		if n > 0 {
			d.Families = append(d.Families, FamilyStats{Family: f, Count: n})
		}
	}
	d.UnmCount = max(d.UnmCount+unmatched, 0)
	slices.SortFunc(d.Families, func(x, y FamilyStats) int {
		return cmp.Or(cmp.Compare(y.Count, x.Count), cmp.Compare(x.Family.ID, y.Family.ID))
	})
	for i := range d.Domains {
		d.Domains[i].Count = 0
		for _, f := range d.Families {
			if f.Family.Domain == d.Domains[i].Domain {
				d.Domains[i].Count += f.Count
			}
		}
	}
	d.CountsLive, d.CountsSince = true, since
}
