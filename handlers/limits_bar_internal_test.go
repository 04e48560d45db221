package handlers

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/limits"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/views"
)

// A limit's bar shows what is left, coloured by how close to empty it is:
// "1 of 12 tokens left" is a short red bar, not a 92%-full one.
func TestLimitBarShowsWhatIsLeft(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	bucket := &schema.Family{ID: "slider-rate", Role: schema.RoleTokenBucket, Type: "hash",
		Params: &schema.TokenBucketParams{Capacity: 12, Requested: 1}}
	window := &schema.Family{ID: "upload-window", Role: schema.RoleCounterWindow, Type: "string",
		Params: &schema.CounterWindowParams{Limit: 10, Window: time.Minute}}
	for _, c := range []struct {
		name   string
		row    limits.Row
		level  string
		width  string
		colour string
	}{
		{"1 of 12 tokens", limits.Row{Key: "b1", Family: bucket, ReadAt: t0, PTTL: time.Minute, State: decode.BucketRow{Stored: 1}}, "1 of 12 tokens left", "w-[5%]", "bg-rose-500"},
		{"5 of 12 tokens", limits.Row{Key: "b5", Family: bucket, ReadAt: t0, PTTL: time.Minute, State: decode.BucketRow{Stored: 5}}, "5 of 12 tokens left", "w-[40%]", "bg-amber-500"},
		{"11 of 12 tokens", limits.Row{Key: "b11", Family: bucket, ReadAt: t0, PTTL: time.Minute, State: decode.BucketRow{Stored: 11}}, "11 of 12 tokens left", "w-[90%]", "bg-emerald-500"},
		{"0 of 12 tokens", limits.Row{Key: "b0", Family: bucket, ReadAt: t0, PTTL: time.Minute, State: decode.BucketRow{Stored: 0}}, "0 of 12 tokens left", "w-0", "bg-rose-500"},
		{"2 of 10 used", limits.Row{Key: "w2", Family: window, ReadAt: t0, PTTL: time.Minute, State: decode.WindowRow{Count: 2}}, "2 of 10 used · 8 left", "w-[80%]", "bg-emerald-500"},
		{"9 of 10 used", limits.Row{Key: "w9", Family: window, ReadAt: t0, PTTL: time.Minute, State: decode.WindowRow{Count: 9}}, "9 of 10 used · 1 left", "w-[10%]", "bg-rose-500"},
	} {
		row := limitRow("main", &c.row, c.row.At(t0), false)
		vm := views.LimitsVM{Conn: "main", Groups: []views.LimitGroup{{Family: c.row.Family.ID, Rows: []views.LimitRow{row}}}}
		var buf bytes.Buffer
		if err := views.LimitsLive(vm, false).Render(context.Background(), &buf); err != nil {
			t.Fatal(err)
		}
		doc, err := goquery.NewDocumentFromReader(&buf)
		if err != nil {
			t.Fatal(err)
		}
		if got := doc.Find(`[data-testid="limit-level"]`).Text(); got != c.level {
			t.Errorf("%s: level %q, want %q", c.name, got, c.level)
		}
		bar := doc.Find(`[data-testid="limit-bar"]`)
		cls := strings.Fields(bar.AttrOr("class", ""))
		if !contains(cls, c.width) || !contains(cls, c.colour) {
			t.Errorf("%s: bar classes %v, want %s and %s", c.name, cls, c.width, c.colour)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
