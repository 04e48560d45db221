package handlers

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/keydeck/keydeck/redisview/leaderboard"
	"github.com/keydeck/keydeck/redisview/stats"
	"github.com/keydeck/keydeck/views"
)

// chartDoc renders a chart and parses it.
func chartDoc(t *testing.T, s views.Spark) *goquery.Document {
	t.Helper()
	var b bytes.Buffer
	if err := views.Sparkline(s).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	doc, err := goquery.NewDocumentFromReader(&b)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// The overview charts its hour with both axes labelled, the time axis
// ending at the read, and says what it is to screen readers.
func TestSparksChartTheHour(t *testing.T) {
	at := time.Date(2026, 12, 2, 15, 0, 0, 0, time.UTC)
	ov := stats.Overview{At: at}
	for i := range 30 {
		ov.Trend = append(ov.Trend, stats.TrendSample{At: at.Add(-time.Duration(29-i) * stats.TrendStep),
			OpsPerSec: float64(i * 100), HasOps: true, UsedMemory: int64(i) << 20, HasMemory: true})
	}
	sp := sparks(ov, at.Add(time.Hour))
	if len(sp) != 2 || sp[0].Last != "2,900" || sp[1].Last != "29.0 MiB" {
		t.Fatalf("sparks = %+v", sp)
	}
	doc := chartDoc(t, sp[0])
	if n := doc.Find(`[data-testid="chart-y-axis"] text`).Length(); n < 2 {
		t.Fatalf("%d value labels", n)
	}
	// Five minutes of history: the axis spans five minutes, not the hour.
	x := doc.Find(`[data-testid="chart-x-axis"] text`)
	if x.Length() < 3 || x.First().Text() != "now" || x.Last().Text() != "−5m" {
		t.Fatalf("time labels %q", x.Text())
	}
	if l, _ := doc.Find(`svg[role="img"]`).Attr("aria-label"); l != "Ops/sec, last 5m: latest 2.9k ops/s, lowest 0, highest 2.9k." {
		t.Fatalf("aria-label %q", l)
	}
	mem := chartDoc(t, sp[1]).Find(`[data-testid="chart-y-axis"] text`)
	if mem.Last().Text() != "30 MiB" {
		t.Fatalf("memory labels %q", mem.Text())
	}
	// A server that reports neither says so instead of drawing.
	sp = sparks(stats.Overview{At: at}, at)
	if sp[0].Last != "n/a" || sp[0].Chart.Empty == "" || len(sp[0].Chart.Lines) != 0 {
		t.Fatalf("no figures: %+v", sp[0])
	}
}

// The leaderboard's chart starts where counting started: before the
// first live read it says it is not watched yet; then its bars cover
// only the minutes since, on an axis of at least five minutes.
func TestActivityChartSinceFirstWatched(t *testing.T) {
	var tr leaderboard.Tracker
	if c, note := activityChart(nil, time.Now()); c.Empty == "" || note != "" {
		t.Fatalf("never watched: %+v %q", c, note)
	}
	t0 := time.Date(2026, 12, 2, 15, 0, 30, 0, time.UTC)
	st := tr.Get(leaderboard.WindowID{Conn: "c", Key: "lb", N: 10})
	st.Observe([]leaderboard.Entry{{Member: "a", Score: 1}}, t0)
	st.Observe([]leaderboard.Entry{{Member: "a", Score: 2}, {Member: "b", Score: 1}}, t0.Add(2*time.Minute))
	now := t0.Add(2*time.Minute + 10*time.Second)
	c, note := activityChart(st, now)
	if len(c.Bars) != 3 || c.Bars[2].Title != "2 changes/min from −40s to now" {
		t.Fatalf("bars = %+v", c.Bars)
	}
	if c.XTicks[len(c.XTicks)-1].Label != "−5m" || note == "" {
		t.Fatalf("x ticks %+v, note %q", c.XTicks, note)
	}
	// After an hour of watching, the axis is the last hour.
	now = t0.Add(3 * time.Hour)
	st.Observe([]leaderboard.Entry{{Member: "a", Score: 3}}, now)
	if c, _ = activityChart(st, now); len(c.Bars) != 60 || c.XTicks[len(c.XTicks)-1].Label != "−1h" {
		t.Fatalf("after hours: %d bars, ticks %+v", len(c.Bars), c.XTicks)
	}
}
