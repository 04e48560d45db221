package chart

import (
	"strconv"
	"strings"
	"time"
)

// The chart's box, in SVG user units: the plot area leaves room for the
// value labels on the left and the time labels below. The SVG keeps its
// aspect ratio, so labels are never stretched.
const (
	W, H       = 320.0, 132.0
	plotLeft   = 50.0
	plotRight  = 312.0
	plotTop    = 8.0
	plotBottom = 108.0
	// maxPoints bounds what one series draws: longer histories are
	// averaged into this many time bins (a live fragment stays small).
	maxPoints = 240
)

// Point is one value at one time; Title, when set, replaces the value's
// tooltip (e.g. with the sample's own clock time).
type Point struct {
	At    time.Time
	V     float64
	Title string
}

// Series is one named line (or the bars) of a chart. Class colours it
// with a Tailwind text colour (the SVG strokes in currentColor), so it
// follows the light and dark palettes.
type Series struct {
	Name   string
	Class  string
	Points []Point // oldest first
}

// Spec says what to draw: the time window ends at End and spans Span.
type Spec struct {
	TestID string
	Title  string
	Units  Units
	End    time.Time
	Span   time.Duration
	// ZeroBased: the value axis starts at 0 (counts and rates); memory
	// does not, or its changes would be a flat line at the top.
	ZeroBased bool
	// Gap: points further apart than this are not joined (Keydeck was not
	// watching in between); 0 joins every point.
	Gap time.Duration
	// Bars: each point is a bar this long in time, starting at its At.
	Bars time.Duration
	// Dots marks every point, each with its tooltip.
	Dots bool
	// Empty is said when there is nothing to draw (fewer than two points
	// of a line, no bar).
	Empty string
}

// Chart is a laid-out chart, as views.Chart draws it.
type Chart struct {
	TestID, Title string
	// Summary is the chart in words, for screen readers (aria-label).
	Summary string
	// Unit names the value axis; XUnit the time axis.
	Unit, XUnit string
	Empty       string
	YTicks      []Tick
	XTicks      []Tick
	Lines       []Line
	Bars        []Bar
	Dots        []Dot
	Legend      []Legend
	// The plot area's edges, for the axis lines.
	X0, X1, Y0, Y1 string
}

// Tick is one labelled position on an axis; Anchor, when set, is the
// label's text-anchor ("end" for the time label at the right edge, which
// centred would run past the box).
type Tick struct{ Pos, Label, Anchor string }

// Line is one joined run of a series' points.
type Line struct{ Points, Class string }

// Bar is one bar, titled with its value and time.
type Bar struct{ X, Y, W, H, Title, Class string }

// Dot is one marked point.
type Dot struct{ X, Y, Title, Class string }

// Legend names a series by its colour.
type Legend struct{ Name, Class string }

func num(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) }

// Build lays a chart out: its axes' ticks from the visible values and
// the window, its lines or bars scaled into the plot area.
func Build(s Spec, series ...Series) Chart {
	c := Chart{TestID: s.TestID, Title: s.Title, Unit: s.Units.Name, XUnit: "time before now",
		X0: num(plotLeft), X1: num(plotRight), Y0: num(plotTop), Y1: num(plotBottom)}
	from := s.End.Add(-s.Span)
	vis := make([]Series, 0, len(series))
	lo, hi, have := 0.0, 0.0, false
	for _, se := range series {
		se.Points = downsample(window(se.Points, from, s.End), from, s.Span)
		for _, p := range se.Points {
			if !have {
				lo, hi, have = p.V, p.V, true
			}
			lo, hi = min(lo, p.V), max(hi, p.V)
		}
		vis = append(vis, se)
	}
	if !drawable(s, vis) {
		c.Empty = s.Empty
		c.Summary = s.Title + ": " + s.Empty
		return c
	}
	if s.ZeroBased {
		lo = min(lo, 0)
	}
	yt := NiceTicks(lo, hi, 5, s.Units)
	yOf := func(v float64) float64 {
		return plotBottom - (v-yt.Lo)/(yt.Hi-yt.Lo)*(plotBottom-plotTop)
	}
	xOf := func(t time.Time) float64 {
		return plotLeft + float64(t.Sub(from))/float64(s.Span)*(plotRight-plotLeft)
	}
	for i, v := range yt.Values {
		c.YTicks = append(c.YTicks, Tick{Pos: num(yOf(v)), Label: yt.Labels[i]})
	}
	for _, d := range AgoTicks(s.Span, 5) {
		t := Tick{Pos: num(xOf(s.End.Add(-d))), Label: AgoLabel(d)}
		if d == 0 {
			t.Anchor = "end"
		}
		c.XTicks = append(c.XTicks, t)
	}
	for _, se := range vis {
		if len(vis) > 1 {
			c.Legend = append(c.Legend, Legend{Name: se.Name, Class: se.Class})
		}
		c.draw(s, se, xOf, yOf)
	}
	c.Summary = summary(s, vis)
	return c
}

// draw adds one series' bars, or its lines (broken at gaps) and dots.
func (c *Chart) draw(s Spec, se Series, xOf func(time.Time) float64, yOf func(float64) float64) {
	if s.Bars > 0 {
		for _, p := range se.Points {
			x0, x1 := max(xOf(p.At), plotLeft), min(xOf(p.At.Add(s.Bars)), plotRight)
			y := yOf(p.V)
			c.Bars = append(c.Bars, Bar{X: num(x0), Y: num(y), W: num(max(x1-x0-0.6, 0.8)), H: num(plotBottom - y),
				Title: tooltip(p, s, se), Class: se.Class})
		}
		return
	}
	var b strings.Builder
	flush := func() {
		if b.Len() > 0 {
			c.Lines = append(c.Lines, Line{Points: b.String(), Class: se.Class})
			b.Reset()
		}
	}
	for i, p := range se.Points {
		if i > 0 && s.Gap > 0 && p.At.Sub(se.Points[i-1].At) > s.Gap {
			flush()
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		x, y := num(xOf(p.At)), num(yOf(p.V))
		b.WriteString(x + "," + y)
		if s.Dots {
			c.Dots = append(c.Dots, Dot{X: x, Y: y, Title: tooltip(p, s, se), Class: se.Class})
		}
	}
	flush()
}

// drawable: some series has a bar, or two points to join (or one dot).
func drawable(s Spec, vis []Series) bool {
	for _, se := range vis {
		if len(se.Points) >= 2 || (len(se.Points) == 1 && (s.Bars > 0 || s.Dots)) {
			return true
		}
	}
	return false
}

func tooltip(p Point, s Spec, se Series) string {
	t := p.Title
	if t == "" {
		when := "at " + AgoLabel(s.End.Sub(p.At))
		if to := AgoLabel(s.End.Sub(p.At.Add(s.Bars))); s.Bars > 0 && to != AgoLabel(s.End.Sub(p.At)) {
			when = "from " + AgoLabel(s.End.Sub(p.At)) + " to " + to
		}
		t = Value(p.V, s.Units) + unitAfter(s.Units) + " " + when
	}
	if se.Name != "" {
		t = se.Name + ": " + t
	}
	return t
}

// unitAfter is the unit written after a value where the value's own
// suffix does not already say it (memory writes "MiB").
func unitAfter(u Units) string {
	if u.Base == 1024 || u.Name == "" {
		return ""
	}
	return " " + u.Name
}

// window keeps the points inside [from, to].
func window(ps []Point, from, to time.Time) []Point {
	var out []Point
	for _, p := range ps {
		if !p.At.Before(from) && !p.At.After(to) {
			out = append(out, p)
		}
	}
	return out
}

// downsample averages a long series into maxPoints time bins; each bin's
// point sits at the mean of its times.
func downsample(ps []Point, from time.Time, span time.Duration) []Point {
	if len(ps) <= maxPoints || span <= 0 {
		return ps
	}
	bin := span / maxPoints
	var out []Point
	var sumV float64
	var sumT int64
	n, cur := 0, int64(-1)
	emit := func() {
		if n > 0 {
			out = append(out, Point{At: time.Unix(0, sumT/int64(n)), V: sumV / float64(n)})
		}
		sumV, sumT, n = 0, 0, 0
	}
	for _, p := range ps {
		k := min(int64(p.At.Sub(from)/bin), maxPoints-1) // the edge joins the last bin
		if k != cur {
			emit()
			cur = k
		}
		sumV += p.V
		sumT += p.At.UnixNano()
		n++
	}
	emit()
	return out
}

// summary is the chart in one sentence: each series' latest, lowest and
// highest value over the window (bars: their total and peak).
func summary(s Spec, vis []Series) string {
	parts := []string{}
	for _, se := range vis {
		if len(se.Points) == 0 {
			continue
		}
		lo, hi, sum := se.Points[0].V, se.Points[0].V, 0.0
		for _, p := range se.Points {
			lo, hi, sum = min(lo, p.V), max(hi, p.V), sum+p.V
		}
		u := unitAfter(s.Units)
		var txt string
		if s.Bars > 0 {
			txt = "total " + Value(sum, s.Units) + ", peak " + Value(hi, s.Units) + u
		} else {
			txt = "latest " + Value(se.Points[len(se.Points)-1].V, s.Units) + u + ", lowest " + Value(lo, s.Units) + ", highest " + Value(hi, s.Units)
		}
		if se.Name != "" {
			txt = se.Name + " " + txt
		}
		parts = append(parts, txt)
	}
	return s.Title + ", last " + strings.TrimPrefix(AgoLabel(s.Span), "−") + ": " + strings.Join(parts, "; ") + "."
}

// Palette colours series in turn; the classes live here, where Tailwind
// finds them, and follow the light and dark palettes.
var Palette = []string{"text-sky-600", "text-emerald-600", "text-amber-600", "text-rose-600", "text-slate-500"}
