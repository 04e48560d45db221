package views

import "testing"

func TestLeftBar(t *testing.T) {
	for _, c := range []struct {
		left, limit float64
		refused     bool
		pct         int
		classes     string
	}{
		// The fill never looks fuller than what is left: widths round down
		// to 5% steps, with a 5% sliver when anything at all is left.
		{1, 12, false, 8, "w-[5%] bg-rose-500"},
		{0.1, 12, false, 0, "w-0 bg-rose-500"},
		{0.12, 12, false, 1, "w-[5%] bg-rose-500"},
		{19, 20, false, 95, "w-[95%] bg-emerald-500"},
		{19.9, 20, false, 99, "w-[95%] bg-emerald-500"},
		{0, 12, true, 0, "w-0 bg-rose-500"},
		{2.4, 12, false, 20, "w-[20%] bg-amber-500"},
		{5.99, 12, false, 49, "w-[45%] bg-amber-500"},
		{6, 12, false, 50, "w-[50%] bg-emerald-500"},
		{12, 12, false, 100, "w-full bg-emerald-500"},
		{13, 12, false, 100, "w-full bg-emerald-500"},
		{0.6, 1, true, 60, "w-[60%] bg-rose-500"}, // refused: a request needs more than is left
		{-1, 12, false, 0, "w-0 bg-rose-500"},
		{3, 0, false, 0, "w-0 bg-rose-500"},
	} {
		pct := LeftPct(c.left, c.limit)
		if pct != c.pct {
			t.Errorf("LeftPct(%v, %v) = %d, want %d", c.left, c.limit, pct, c.pct)
		}
		if got := leftBar(pct, c.refused); got != c.classes {
			t.Errorf("leftBar(%d, %v) = %q, want %q", pct, c.refused, got, c.classes)
		}
	}
}
