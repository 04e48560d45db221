package metrics

import (
	"time"

	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/limits"
	"github.com/keydeck/keydeck/redisview/quotas"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/redisview/stats"
)

// collectSweeps exports the statistics sweeps' completed passes.
func collectSweeps(e emitter, held []stats.Held, now time.Time) {
	for _, h := range held {
		d := h.Detail
		c, n := d.Conn, db(d.DB)
		keys := d.UnmCount
		for _, f := range d.Families {
			keys += f.Count
			e.gauge(familyKeys, float64(f.Count), c, n, f.Family.ID)
			e.gauge(violations, float64(f.Violations), c, n, f.Family.ID)
			// Memory 0 with keys is memory not read (MEMORY refused, or
			// a stopped sweeper's pass that did not say why): unknown.
			if d.MemoryWhy == "" && d.Memory > 0 {
				e.gauge(familyMemory, float64(f.Memory), c, n, f.Family.ID)
			}
		}
		e.gauge(unmatchedKeys, float64(d.UnmCount), c, n)
		e.counter(sweepPasses, float64(d.Pass), c, n)
		e.gauge(sweepKeys, float64(keys), c, n)
		if !d.CompletedAt.IsZero() {
			e.gauge(sweepAge, max(0, now.Sub(d.CompletedAt).Seconds()), c, n)
		}
		e.gauge(sweepUnchanged, boolValue(!d.UnchangedSince.IsZero()), c, n)
		if h.Running {
			p := 1.0
			if keys > 0 {
				p = min(1, float64(h.Seen)/float64(keys))
			}
			e.gauge(sweepProgress, p, c, n)
		}
	}
}

// collectLimits exports the limit sweeps' rows at now: a family is
// exported once the sweep has scanned it.
func collectLimits(e emitter, snaps map[string]limits.Snapshot, now time.Time) {
	for conn, s := range snaps {
		for _, f := range s.Families {
			if !f.Read {
				continue
			}
			n, id := db(f.DB), f.Family.ID
			switch {
			case f.Class == decode.ClassLimit:
				throttled := 0
				for _, r := range f.Rows {
					if st := r.At(now); st.Throttled && !st.Gone {
						throttled++
					}
				}
				e.gauge(throttledKeys, float64(throttled), conn, n, id)
			case f.Class == decode.ClassLock:
				collectLocks(e, conn, f, now)
			}
		}
	}
}

func collectLocks(e emitter, conn string, f limits.FamilySnap, now time.Time) {
	n, id := db(f.DB), f.Family.ID
	held, over := 0, 0
	var oldest time.Duration
	for _, r := range f.Rows {
		st := r.At(now)
		if st.Gone {
			continue
		}
		held++
		if st.NoTTL || st.OverMax {
			over++
		}
		oldest = max(oldest, st.Age)
	}
	count := int64(held)
	if f.Total > int64(len(f.Rows)) {
		count = f.Total // more than the sweep keeps: its pass's count
	}
	e.gauge(locksHeld, float64(count), conn, n, id)
	e.gauge(locksOverTTL, float64(over), conn, n, id)
	if oldest > 0 {
		e.gauge(lockOldest, oldest.Seconds(), conn, n, id)
	}
	if m := f.Family.TTL.Max; m > 0 {
		e.gauge(lockMaxTTL, m.Seconds(), conn, n, id)
	}
}

// collectQuotas exports the quota walks: the most used subject of each
// family, and once a pass completed, the orphans per database.
func collectQuotas(e emitter, snaps []quotas.Snapshot) {
	for _, s := range snaps {
		if !s.Started {
			continue
		}
		e.counter(quotaPasses, float64(s.Pass), s.Conn)
		orphans, members, unknown := map[int]int{}, map[int]int{}, map[int]bool{}
		for _, f := range s.Families {
			top, ok := 0.0, false
			for _, r := range f.Rows {
				if r.HasPercent() && !r.Past {
					top, ok = max(top, float64(r.Used)/float64(r.Limit)), true
				}
				if r.Orphaned {
					orphans[f.DB]++
				}
				members[f.DB] += len(r.Orphans)
				if !orphanChecked(r) {
					unknown[f.DB] = true
				}
			}
			// A database with such a family walked has a count, if 0.
			switch f.Family.Role {
			case schema.RoleReservation:
				orphans[f.DB] += 0
			case schema.RoleConcurrencySet:
				members[f.DB] += 0
			}
			if ok {
				e.gauge(quotaUsed, top, s.Conn, db(f.DB), f.Family.ID)
			}
		}
		if s.Pass < 1 {
			continue // the rows so far are not every reservation
		}
		for d, k := range orphans {
			if !unknown[d] { // a count only when every reservation was checked
				e.gauge(orphanedRes, float64(k), s.Conn, db(d))
			}
		}
		for d, k := range members {
			e.gauge(orphanedMembers, float64(k), s.Conn, db(d))
		}
	}
}

// orphanChecked reports a row whose orphan check was decided: not a
// reservation the check applies to, or one looked up in every concurrency
// set (not sensitive sets, never looked in; not only the sets known).
func orphanChecked(r quotas.Row) bool {
	if r.Family.Role != schema.RoleReservation || r.Gone || r.Note != "" {
		return true
	}
	return r.SetsKnown && !r.SetsSensitive && r.SetsComplete
}
