package views

import (
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/keydeck/keydeck/views/format"
)

// A time the server wrote becomes a <time> the browser can rewrite; the
// UTC text stays, as the fallback and the hover title.
func TestWhen(t *testing.T) {
	at := time.Date(2026, 11, 29, 14, 30, 5, 0, time.FixedZone("CET", 3600))
	tests := []struct {
		in                  string
		datetime, local     string // "" when no <time>
		wantTime, wantClock bool
	}{
		{in: format.Time(at), datetime: "2026-11-29T13:30:05Z", local: "datetime", wantTime: true},
		{in: format.Clock(at), local: "clock", wantTime: true, wantClock: true},
		{in: "never"},
		{in: "2026-11-29 13:30:05"}, // no zone said: not one of ours
		{in: "99:99:99 UTC"},        // shaped like a clock, not one
		{in: "<b>2026-11-29 13:30:05 UTC</b>"},
	}
	for _, tt := range tests {
		doc := render(t, When(tt.in))
		tm := doc.Find("time")
		if got := tm.Length() == 1; got != tt.wantTime {
			t.Errorf("When(%q): <time> present = %v, want %v", tt.in, got, tt.wantTime)
			continue
		}
		if doc.Text() != tt.in {
			t.Errorf("When(%q) text = %q, want it unchanged", tt.in, doc.Text())
		}
		if !tt.wantTime {
			continue
		}
		if title, _ := tm.Attr("title"); title != tt.in {
			t.Errorf("When(%q) title = %q", tt.in, title)
		}
		if got, _ := tm.Attr("data-local"); got != tt.local {
			t.Errorf("When(%q) data-local = %q, want %q", tt.in, got, tt.local)
		}
		dt, has := tm.Attr("datetime")
		if tt.wantClock && has {
			t.Errorf("When(%q): a clock has no date, yet datetime=%q", tt.in, dt)
		}
		if !tt.wantClock && dt != tt.datetime {
			t.Errorf("When(%q) datetime = %q, want %q", tt.in, dt, tt.datetime)
		}
	}
}

// WithTimes keeps a sentence's words and marks each time in it.
func TestWithTimes(t *testing.T) {
	s := "Exact as of the sweep completed at 14:30:05 UTC; unchanged since 2026-11-29 14:00:00 UTC (no write since) at 12:00"
	doc := render(t, WithTimes(s))
	if doc.Text() != s {
		t.Fatalf("text = %q, want the sentence unchanged", doc.Text())
	}
	var got []string
	doc.Find("time").Each(func(_ int, e *goquery.Selection) { got = append(got, e.Text()) })
	want := []string{"14:30:05 UTC", "2026-11-29 14:00:00 UTC"}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("times = %q, want %q", got, want)
	}
	if d := render(t, WithTimes("")); d.Find("time").Length() != 0 || d.Text() != "" {
		t.Fatalf("empty sentence rendered %q", d.Text())
	}
}
