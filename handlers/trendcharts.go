package handlers

import (
	"time"

	"github.com/keydeck/keydeck/redisview/stats"
	"github.com/keydeck/keydeck/views"
	"github.com/keydeck/keydeck/views/chart"
	"github.com/keydeck/keydeck/views/format"
)

// trendEmpty is said until the hour has two bins to join.
const trendEmpty = "Collecting: Keydeck keeps this hour in memory from the overview's own reads, since it was first watched; the line starts within 20 seconds."

// trendEnd is the right edge of the hour's charts: the read's own time,
// so a chart rendered later does not slide its points left.
func trendEnd(ov stats.Overview, now time.Time) time.Time {
	if ov.At.IsZero() {
		return now
	}
	return ov.At
}

// trendSpec is the hour's common layout. The time axis reaches back to
// the first bin kept (at least five minutes, at most the hour), so a
// history that started a minute ago is not a speck at the right edge;
// points more than three bins apart were not watched in between and are
// not joined.
func trendSpec(testID, title string, u chart.Units, end time.Time, trend []stats.TrendSample) chart.Spec {
	span := 5 * time.Minute
	if len(trend) > 0 {
		span = max(span, end.Sub(trend[0].At))
	}
	return chart.Spec{TestID: testID, Title: title, Units: u, End: end, Span: min(span, stats.TrendSpan),
		Gap: 3 * stats.TrendStep, Empty: trendEmpty}
}

// sparks builds the overview's ops/sec and memory charts over the last
// hour, each beside its latest figure.
func sparks(ov stats.Overview, now time.Time) []views.Spark {
	var ops, mem []chart.Point
	for _, s := range ov.Trend {
		if s.HasOps {
			ops = append(ops, chart.Point{At: s.At, V: s.OpsPerSec})
		}
		if s.HasMemory {
			mem = append(mem, chart.Point{At: s.At, V: float64(s.UsedMemory)})
		}
	}
	end := trendEnd(ov, now)
	opsSpec := trendSpec("spark-ops-chart", "Ops/sec", chart.Count("ops/s"), end, ov.Trend)
	opsSpec.ZeroBased = true
	opsS := views.Spark{Label: "Ops/sec, last hour", TestID: "spark-ops",
		Chart: chart.Build(opsSpec, chart.Series{Class: chart.Palette[0], Points: ops})}
	if len(ops) > 0 {
		opsS.Last = format.Rate(ops[len(ops)-1].V)
	} else {
		opsS.Last, opsS.Chart.Empty = "n/a", "Not reported by this server."
	}
	memS := views.Spark{Label: "Memory, last hour", TestID: "spark-mem",
		Chart: chart.Build(trendSpec("spark-mem-chart", "Memory", chart.Memory(), end, ov.Trend), chart.Series{Class: chart.Palette[0], Points: mem})}
	if len(mem) > 0 {
		memS.Last = format.Bytes(int64(mem[len(mem)-1].V))
	} else {
		memS.Last, memS.Chart.Empty = "n/a", "Not reported by this server."
	}
	return []views.Spark{opsS, memS}
}
