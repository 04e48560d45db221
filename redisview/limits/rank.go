package limits

import (
	"slices"
	"time"

	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/schema"
)

// Ranked is one family of a Rate limits or Locks page at a moment: its
// kept rows most constrained first, those gone by then dropped, those
// not matching the page's filter counted apart.
type Ranked struct {
	FamilySnap
	// Shown are the rows matching the filter, most constrained first,
	// each with its state at the moment ranked.
	Shown  []RowState
	Hidden int // rows kept that do not match the filter
	// Throttled counts the shown rows throttled (or locked) now.
	Throttled int
}

// RowState is a row and its state at the moment ranked.
type RowState struct {
	Row   *Row
	State State
}

// NotRead reports a family the sweep has not scanned yet, and that
// nothing told it of a key: its rows are not known, which is not none.
func (f FamilySnap) NotRead() bool { return !f.Read && len(f.Rows) == 0 }

// Kept says which of a family's keys its rows are: the keys found so far
// while the first pass runs (Running, of Found), or the keep most
// constrained of about Of keys (Cut), or all Of of them.
type Kept struct {
	Running bool
	Found   int64
	Cut     bool
	Of      int64
}

// Kept says which of f's keys its rows are, keep rows being kept at most.
func (f FamilySnap) Kept(keep int) Kept {
	n := int64(len(f.Rows))
	switch {
	case f.Total < 0:
		return Kept{Running: true, Found: max(f.Seen, n)}
	case f.Total > int64(keep) || (f.Total > n && n == int64(keep)):
		return Kept{Cut: true, Of: max(f.Total, f.Seen)}
	}
	return Kept{Of: max(f.Total, n)}
}

// rank ranks the read families of class c in snap at now, filtered; a
// filter drops the families it matches no row of.
func rank(snap Snapshot, c decode.Class, filter string, now time.Time) []Ranked {
	var out []Ranked
	for _, f := range snap.Families {
		if f.Class != c || f.NotRead() {
			continue // unread families are named apart
		}
		r := Ranked{FamilySnap: f}
		rows := slices.Clone(f.Rows)
		Sort(rows, now)
		for i := range rows {
			row := &rows[i]
			st := row.At(now)
			if st.Gone {
				continue
			}
			if !row.Matches(filter) {
				r.Hidden++
				continue
			}
			r.Shown = append(r.Shown, RowState{Row: row, State: st})
			if st.Throttled {
				r.Throttled++
			}
		}
		if filter != "" && len(r.Shown) == 0 {
			continue // a filter shows the families it matches
		}
		out = append(out, r)
	}
	return out
}

// RankLimits is the Rate limits page's families at now: those with a
// throttled or locked row first (their most constrained row is), each
// group in the pack's order.
func RankLimits(snap Snapshot, filter string, now time.Time) []Ranked {
	out := rank(snap, decode.ClassLimit, filter, now)
	throttled := func(r Ranked) int {
		if len(r.Shown) > 0 && r.Shown[0].State.Throttled {
			return 0
		}
		return 1
	}
	slices.SortStableFunc(out, func(a, b Ranked) int { return throttled(a) - throttled(b) })
	return out
}

// RankLocks is the Locks page's families at now: locks held first, then
// cooldowns, then families holding none, each in the pack's order.
func RankLocks(snap Snapshot, filter string, now time.Time) []Ranked {
	out := rank(snap, decode.ClassLock, filter, now)
	order := func(r Ranked) int {
		n := 0
		if len(r.Shown) == 0 {
			n += 2
		}
		if r.Family.Role == schema.RoleCooldown {
			n++
		}
		return n
	}
	slices.SortStableFunc(out, func(a, b Ranked) int { return order(a) - order(b) })
	return out
}
