package chart

import (
	"strings"
	"testing"
	"time"
)

var end = time.Date(2026, 12, 2, 15, 0, 0, 0, time.UTC)

func pts(vals ...float64) []Point {
	var out []Point
	for i, v := range vals {
		out = append(out, Point{At: end.Add(-time.Duration(len(vals)-1-i) * time.Minute), V: v})
	}
	return out
}

func TestBuildLine(t *testing.T) {
	s := Spec{TestID: "c", Title: "Ops/sec", Units: Count("ops/s"), End: end, Span: time.Hour, ZeroBased: true, Empty: "none"}
	c := Build(s, Series{Class: "text-sky-600", Points: pts(10, 40, 25)})
	if c.Empty != "" || len(c.Lines) != 1 {
		t.Fatalf("empty %q, lines %d", c.Empty, len(c.Lines))
	}
	if got := strings.Count(c.Lines[0].Points, ","); got != 3 {
		t.Fatalf("points = %q", c.Lines[0].Points)
	}
	// The last point is at the right edge, now; the axis starts at 0.
	last := c.Lines[0].Points[strings.LastIndex(c.Lines[0].Points, " ")+1:]
	if !strings.HasPrefix(last, num(plotRight)+",") {
		t.Fatalf("last point %q is not at the right edge", last)
	}
	if c.YTicks[0].Label != "0" || c.YTicks[0].Pos != num(plotBottom) {
		t.Fatalf("first y tick = %+v", c.YTicks[0])
	}
	if c.XTicks[0].Label != "now" || c.XTicks[len(c.XTicks)-1].Label != "−1h" {
		t.Fatalf("x ticks = %+v", c.XTicks)
	}
	if want := "Ops/sec, last 1h: latest 25 ops/s, lowest 10, highest 40."; c.Summary != want {
		t.Fatalf("summary = %q, want %q", c.Summary, want)
	}
}

func TestBuildBreaksLinesAtGaps(t *testing.T) {
	p := pts(1, 2, 3, 4, 5, 6)
	p = append(p[:2], p[4:]...) // two minutes missing
	c := Build(Spec{Units: Count("keys"), End: end, Span: time.Hour, Gap: 90 * time.Second}, Series{Points: p})
	if len(c.Lines) != 2 {
		t.Fatalf("lines = %+v, want two runs", c.Lines)
	}
}

func TestBuildEmptyAndWindow(t *testing.T) {
	s := Spec{Title: "Memory", Units: Memory(), End: end, Span: 5 * time.Minute, Empty: "collecting"}
	old := []Point{{At: end.Add(-time.Hour), V: 1}, {At: end.Add(-50 * time.Minute), V: 2}, {At: end, V: 3}}
	c := Build(s, Series{Points: old})
	if c.Empty != "collecting" || len(c.Lines) != 0 || !strings.Contains(c.Summary, "collecting") {
		t.Fatalf("one visible point drew %+v", c)
	}
}

func TestBuildBars(t *testing.T) {
	s := Spec{Title: "Score changes", Units: Count("changes/min"), End: end, Span: time.Hour, Bars: time.Minute, ZeroBased: true}
	c := Build(s, Series{Class: "text-sky-600", Points: pts(0, 3, 0, 7)})
	if len(c.Bars) != 4 || len(c.Lines) != 0 {
		t.Fatalf("bars %d lines %d", len(c.Bars), len(c.Lines))
	}
	if c.Bars[3].Title != "7 changes/min at now" || c.Bars[0].H != "0.0" {
		t.Fatalf("bars = %+v", c.Bars)
	}
	if !strings.Contains(c.Summary, "total 10, peak 7 changes/min") {
		t.Fatalf("summary = %q", c.Summary)
	}
}

func TestBuildDownsamples(t *testing.T) {
	var p []Point
	for i := 0; i < 3600; i++ {
		p = append(p, Point{At: end.Add(-time.Hour + time.Duration(i+1)*time.Second), V: float64(i % 2)})
	}
	c := Build(Spec{Units: Count("ops/s"), End: end, Span: time.Hour}, Series{Points: p})
	n := strings.Count(c.Lines[0].Points, ",")
	if n > maxPoints || n < maxPoints-2 {
		t.Fatalf("%d points drawn, want about %d", n, maxPoints)
	}
	// Alternating 0 and 1 average to a half in every bin.
	if c.YTicks[len(c.YTicks)-1].Label != "1" {
		t.Fatalf("y ticks = %+v", c.YTicks)
	}
}

func TestBuildLegendForSeveralSeries(t *testing.T) {
	c := Build(Spec{Units: Count("keys"), End: end, Span: time.Hour},
		Series{Name: "a", Class: Palette[0], Points: pts(1, 2)}, Series{Name: "b", Class: Palette[1], Points: pts(3, 4)})
	if len(c.Legend) != 2 || c.Legend[1].Name != "b" || len(c.Lines) != 2 {
		t.Fatalf("legend %+v lines %d", c.Legend, len(c.Lines))
	}
}
