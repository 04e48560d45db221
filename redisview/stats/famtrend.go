package stats

import (
	"maps"
	"time"

	"github.com/keydeck/keydeck/redisview/schema"
)

// FamilyPoint is one family's figures at the end of a completed pass.
type FamilyPoint struct {
	Count  int64
	Memory int64
}

// FamilyPass is one completed sweep pass as the database page's hour
// keeps it: the figures the pass counted anyway, per family id. It costs
// no Redis command of its own.
type FamilyPass struct {
	At       time.Time
	Families map[string]FamilyPoint
	// MemoryKnown is false when the pass could not read memory (MEMORY
	// USAGE refused): its Memory figures are then zero, not measured.
	MemoryKnown bool
}

// famTrend keeps the completed passes of the last TrendSpan, oldest
// first, one per TrendStep bin (a later pass replaces an earlier one in
// the same bin), so a small database re-swept every two seconds still
// keeps at most TrendSpan/TrendStep+1 passes.
type famTrend struct{ passes []FamilyPass }

// add records a completed pass finished at `at`.
func (t *famTrend) add(at time.Time, fams map[*schema.Family]*FamilyStats, memKnown bool) {
	p := FamilyPass{At: at, Families: make(map[string]FamilyPoint, len(fams)), MemoryKnown: memKnown}
	for f, fs := range fams {
		fig := fs.figures(1)
		p.Families[f.ID] = FamilyPoint{Count: fig.Count, Memory: fig.Memory}
	}
	if n := len(t.passes); n > 0 && t.passes[n-1].At.Truncate(TrendStep).Equal(at.Truncate(TrendStep)) {
		t.passes[n-1] = p
	} else {
		t.passes = append(t.passes, p)
	}
	cut := 0
	for cut < len(t.passes) && at.Sub(t.passes[cut].At) > TrendSpan {
		cut++
	}
	if cut > 0 {
		t.passes = append(t.passes[:0], t.passes[cut:]...)
	}
}

// copy returns the passes for a page: the slice and the maps are the
// page's own (a later add neither changes nor races with them).
func (t *famTrend) copy() []FamilyPass {
	out := make([]FamilyPass, len(t.passes))
	for i, p := range t.passes {
		p.Families = maps.Clone(p.Families)
		out[i] = p
	}
	return out
}
