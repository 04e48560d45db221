// Package chart lays out Keydeck's charts: the axes' ticks (nice numbers
// in the values' own unit, times before now) and the scaled geometry one
// templ component (views.Chart) draws. It is pure: no Redis, no HTML.
package chart

import (
	"math"
	"strconv"
	"time"
)

// Units say how a chart's values are written on its value axis.
type Units struct {
	// Name is the unit the axis is read in ("ops/s", "keys", "changes
	// per minute"); Bytes charts name their unit in each label instead.
	Name string
	// Base is 1000 for counts and rates (12k, 1.5M), 1024 for memory
	// (KiB, MiB); 0 writes plain numbers (milliseconds).
	Base float64
}

// Count is for whole things and rates: 950, 12k, 1.5M.
func Count(name string) Units { return Units{Name: name, Base: 1000} }

// Memory is for bytes: ticks fall on round KiB, MiB, GiB.
func Memory() Units { return Units{Name: "bytes", Base: 1024} }

// Plain writes numbers as they are, with name as their unit ("ms").
func Plain(name string) Units { return Units{Name: name} }

// scale is the divisor and suffix ticks are computed and written in, so
// that a memory axis reads 0, 512 KiB, 1 MiB rather than 524,288.
func (u Units) scale(hi float64) (float64, string) {
	switch u.Base {
	case 1024:
		sfx := []string{" B", " KiB", " MiB", " GiB", " TiB", " PiB"}
		div, i := 1.0, 0
		for hi/div >= 1024 && i < len(sfx)-1 {
			div *= 1024
			i++
		}
		return div, sfx[i]
	case 1000:
		sfx := []string{"", "k", "M", "G", "T"}
		div, i := 1.0, 0
		for hi/div >= 1000 && i < len(sfx)-1 {
			div *= 1000
			i++
		}
		return div, sfx[i]
	}
	return 1, ""
}

// Ticks are an axis's round values from lo to hi (both included, both
// on the step), about n of them, with their labels.
type Ticks struct {
	Values []float64
	Labels []string
	Lo, Hi float64
}

// NiceTicks picks round tick values (1, 2 or 5 times a power of ten, in
// the unit's scale) covering [lo, hi]. An empty span is widened so that
// a flat series still gets an axis around its value.
func NiceTicks(lo, hi float64, n int, u Units) Ticks {
	if math.IsNaN(lo) || math.IsNaN(hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		lo, hi = 0, 1
	}
	if lo > hi {
		lo, hi = hi, lo
	}
	div, sfx := u.scale(max(math.Abs(lo), math.Abs(hi)))
	slo, shi := lo/div, hi/div
	if shi-slo < 1e-9 {
		if slo == 0 {
			shi = 1
		} else {
			d := math.Abs(slo) * 0.1
			slo, shi = slo-d, shi+d
		}
	}
	n = max(n, 2)
	step := niceNum((shi-slo)/float64(n-1), true)
	if u.Base != 0 && div == 1 {
		step = max(step, 1) // no half keys, no half bytes
	}
	first := math.Floor(slo/step) * step
	last := math.Ceil(shi/step) * step
	dec := max(0, -int(math.Floor(math.Log10(step)+1e-9)))
	t := Ticks{Lo: first * div, Hi: last * div}
	for v := first; v <= last+step/2; v += step {
		v = math.Round(v/step) * step // no drift: 0.30000000000000004
		t.Values = append(t.Values, v*div)
		l := strconv.FormatFloat(v, 'f', dec, 64) + sfx
		if v == 0 {
			l = "0" // not "0k", "0.0 MiB"
		}
		t.Labels = append(t.Labels, l)
	}
	return t
}

// niceNum is Heckbert's: the 1, 2, 5 or 10 times a power of ten nearest
// x (round) or just above it.
func niceNum(x float64, round bool) float64 {
	if x <= 0 {
		return 1
	}
	exp := math.Floor(math.Log10(x))
	f := x / math.Pow(10, exp)
	var nf float64
	switch {
	case round && f < 1.5, !round && f <= 1:
		nf = 1
	case round && f < 3, !round && f <= 2:
		nf = 2
	case round && f < 7, !round && f <= 5:
		nf = 5
	default:
		nf = 10
	}
	return nf * math.Pow(10, exp)
}

// timeSteps are the spacings a time axis may tick at.
var timeSteps = []time.Duration{
	time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second, 30 * time.Second,
	time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour,
	24 * time.Hour, 2 * 24 * time.Hour, 7 * 24 * time.Hour, 30 * 24 * time.Hour,
}

// AgoTicks are the ticks of a time axis spanning span before its right
// edge: "now" there, then every step back ("−5m", "−10m"), at most n+1.
// Times before an edge, not clock times, so that the labels need no time
// zone and stay true as the chart moves.
func AgoTicks(span time.Duration, n int) []time.Duration {
	if span <= 0 {
		return []time.Duration{0}
	}
	n = max(n, 1)
	step := timeSteps[len(timeSteps)-1]
	for _, s := range timeSteps {
		if span/s <= time.Duration(n) {
			step = s
			break
		}
	}
	var out []time.Duration
	for d := time.Duration(0); d <= span; d += step {
		out = append(out, d)
	}
	return out
}

// AgoLabel writes a time before the edge compactly: "now", "−30s",
// "−5m", "−1h30m", "−2d".
func AgoLabel(d time.Duration) string {
	if d <= 0 {
		return "now"
	}
	day := 24 * time.Hour
	switch {
	case d < time.Minute:
		return "−" + strconv.Itoa(int(d/time.Second)) + "s"
	case d < time.Hour && d%time.Minute != 0:
		return "−" + strconv.Itoa(int(d/time.Minute)) + "m" + strconv.Itoa(int(d%time.Minute/time.Second)) + "s"
	case d < time.Hour:
		return "−" + strconv.Itoa(int(d/time.Minute)) + "m"
	case d < day && d%time.Hour == 0:
		return "−" + strconv.Itoa(int(d/time.Hour)) + "h"
	case d < day:
		return "−" + strconv.Itoa(int(d/time.Hour)) + "h" + strconv.Itoa(int(d%time.Hour/time.Minute)) + "m"
	}
	return "−" + strconv.Itoa(int(d/day)) + "d"
}

// Value writes one value in the units' scale, for summaries and
// tooltips: "1.5k", "2.0 MiB", "12".
func Value(v float64, u Units) string {
	div, sfx := u.scale(math.Abs(v))
	x := v / div
	dec := 0
	if math.Abs(x) < 10 && (div > 1 || x != math.Trunc(x)) {
		dec = 1
	}
	if u.Base == 0 && x != math.Trunc(x) {
		dec = 2
	}
	return strconv.FormatFloat(x, 'f', dec, 64) + sfx
}
