package handlers

import (
	"cmp"
	"slices"
	"time"

	"github.com/keydeck/keydeck/redisview/stats"
	"github.com/keydeck/keydeck/views"
	"github.com/keydeck/keydeck/views/chart"
)

// famChartTop is how many families a chart draws: more lines than the
// palette has colours could not be told apart.
const famChartTop = 5

// famEmpty is said until the hour holds two passes.
const famEmpty = "Collecting: Keydeck keeps this hour in memory from the statistics sweep's own passes while this database is watched; the lines start after its second pass."

// famRateNote says what the change chart is, since the sweep counts keys
// and never sees a command.
const famRateNote = "The statistics sweep counts keys; it does not see commands, so there is no per-family ops/s. This chart is the change in each family's key count per minute between passes (keys created minus keys deleted or expired)."

// familyCharts builds the database page's hour: keys and memory of the
// largest families, and the families whose key count moved most.
func familyCharts(d stats.DBDetail, now time.Time) views.FamilyCharts {
	hour := d.Hour
	title := map[string]string{}
	var biggest []string
	for _, f := range d.Families {
		name := f.Family.Title
		if name == "" {
			name = f.Family.ID
		}
		title[f.Family.ID] = name
		if len(biggest) < famChartTop {
			biggest = append(biggest, f.Family.ID)
		}
	}
	spec := func(testID, t string, u chart.Units) chart.Spec {
		span := 5 * time.Minute
		if len(hour) > 0 {
			span = max(span, now.Sub(hour[0].At))
		}
		return chart.Spec{TestID: testID, Title: t, Units: u, End: now, Span: min(span, stats.TrendSpan),
			Gap: 2 * time.Minute, Dots: true, Empty: famEmpty}
	}
	var keys, mem, rate []chart.Series
	memKnown := false
	for _, p := range hour {
		memKnown = memKnown || p.MemoryKnown
	}
	for i, id := range biggest {
		var k, m []chart.Point
		for _, p := range hour {
			fp, ok := p.Families[id]
			k = append(k, chart.Point{At: p.At, V: float64(fp.Count)})
			if ok && p.MemoryKnown {
				m = append(m, chart.Point{At: p.At, V: float64(fp.Memory)})
			}
		}
		class := chart.Palette[i%len(chart.Palette)]
		keys = append(keys, chart.Series{Name: title[id], Class: class, Points: k})
		mem = append(mem, chart.Series{Name: title[id], Class: class, Points: m})
	}
	for i, id := range movers(hour, title) {
		rate = append(rate, chart.Series{Name: title[id], Class: chart.Palette[i%len(chart.Palette)], Points: changeRate(hour, id)})
	}
	rateSpec := spec("family-rate-chart", "Key-count change per minute", chart.Count("keys/min"))
	rateSpec.ZeroBased = true
	fc := views.FamilyCharts{
		Keys:     chart.Build(spec("family-keys-chart", "Keys per family", chart.Count("keys")), keys...),
		Memory:   chart.Build(spec("family-memory-chart", "Memory per family", chart.Memory()), mem...),
		Rate:     chart.Build(rateSpec, rate...),
		RateNote: famRateNote,
	}
	if len(hour) > 0 && !memKnown {
		fc.Memory.Empty = "Memory per key is not readable on this server."
	}
	if len(hour) >= 2 && len(rate) == 0 {
		fc.Rate.Empty = "No family's key count changed over this hour."
	}
	return fc
}

// movers are the families (among those the pack titles, i.e. seen in the
// latest pass) whose key count changed most over the hour, most first;
// families that did not change are left out.
func movers(hour []stats.FamilyPass, title map[string]string) []string {
	if len(hour) < 2 {
		return nil
	}
	first, last := hour[0].Families, hour[len(hour)-1].Families
	type moved struct {
		id string
		by int64
	}
	var ms []moved
	for id := range title {
		by := last[id].Count - first[id].Count
		if by < 0 {
			by = -by
		}
		if by > 0 {
			ms = append(ms, moved{id, by})
		}
	}
	slices.SortFunc(ms, func(a, b moved) int { return cmp.Or(cmp.Compare(b.by, a.by), cmp.Compare(a.id, b.id)) })
	var out []string
	for i := 0; i < len(ms) && i < famChartTop; i++ {
		out = append(out, ms[i].id)
	}
	return out
}

// changeRate is a family's key-count change per minute between
// consecutive passes, placed at the later pass.
func changeRate(hour []stats.FamilyPass, id string) []chart.Point {
	var out []chart.Point
	for i := 1; i < len(hour); i++ {
		dt := hour[i].At.Sub(hour[i-1].At).Minutes()
		if dt <= 0 {
			continue
		}
		dk := hour[i].Families[id].Count - hour[i-1].Families[id].Count
		out = append(out, chart.Point{At: hour[i].At, V: float64(dk) / dt})
	}
	return out
}
