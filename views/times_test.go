package views

import (
	"context"
	"io"
	"strings"
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

// The pages that wrote a time as UTC text mark it for the browser's zone,
// and a value read from Redis that looks like one of our times stays text.
func TestPagesMarkTheirTimes(t *testing.T) {
	at := format.Time(time.Date(2026, 11, 29, 13, 30, 5, 0, time.UTC))
	lookalike := "2026-11-29 13:30:05 UTC" // a lock holder's value, read
	locks := LocksVM{Groups: []LockGroup{{Family: "f", Rows: []LockRow{{Key: "l:1", UnlocksAt: at}, {Key: "l:2", Holder: lookalike}}}}}
	lb := LeaderboardVM{Key: "lb", Size: "2", MetaTitles: []string{"Achieved"}, Rows: []LeaderboardRow{
		{Rank: "1", Member: "ana", Score: "5", Meta: []MetaCell{{Text: at, Time: true}}},
		{Rank: "2", Member: "bo", Score: "4", Meta: []MetaCell{{Text: lookalike}}},
	}}
	dec := DecodedVM{Role: "lock", Summary: "Locked until", SummaryUntil: at, Alert: "Refused until " + at + ".", Rows: []DecodedRow{
		{Label: "Last refill", Value: at + " (3s ago)", Sentence: true},
		{Label: "Raw", Value: "x " + lookalike},
	}}
	user := UserLiveVM{ReadAt: format.Clock(time.Now()), Disconnected: "Down. The figures below are from 13:30:05 UTC.",
		Scans: []SearchScanVM{{DB: 0, Match: "*x*", Progress: "about 5 of ~9 keys scanned at 13:30:05 UTC."}}}
	key := KeyVM{Pattern: "a:{at}", NameParts: []NamePartRow{
		{Name: "at", Raw: "1796045405", Meaning: at, How: "epoch seconds"},
		{Name: "at", Raw: "1796045405123", Meaning: "2026-11-29 13:30:05.123 UTC", How: "epoch milliseconds"},
		{Name: "at", Raw: lookalike, Meaning: lookalike, How: "as read"},
	}}
	tests := []struct {
		name string
		c    interface {
			Render(context.Context, io.Writer) error
		}
		where string
		times int // <time> elements inside where
		text  string
	}{
		{"lock unlocks at", LocksLive(locks, false), `[data-testid="lock-holder"]`, 1, "unlocks at " + at + lookalike},
		{"leaderboard achieved", LeaderboardLive(lb, false), `[data-testid="lb-row"] td:last-child`, 1, at + lookalike},
		{"decoded summary", DecodedPanel(dec), `[data-testid="decoded-summary"]`, 1, "Locked until " + at},
		{"decoded alert", DecodedPanel(dec), `[data-testid="decoded-alert"]`, 1, "Refused until " + at + "."},
		{"decoded sentence row", DecodedPanel(dec), `[data-testid="decoded-row"] dd`, 1, at + " (3s ago)x " + lookalike},
		{"user disconnected", UserLive(user, false), `[data-testid="disconnected"]`, 1, user.Disconnected},
		{"user scans", UserLive(user, false), `[data-testid="user-scan"]`, 1, "db0, MATCH *x*: " + user.Scans[0].Progress},
		{"key name part, epoch seconds", keyNameParts(key), `[data-testid="name-part-meaning"] span.font-mono`, 1, at + "2026-11-29 13:30:05.123 UTC" + lookalike},
	}
	for _, tt := range tests {
		doc := render(t, tt.c)
		sel := doc.Find(tt.where)
		if n := sel.Find("time[data-local]").Length(); n != tt.times {
			t.Errorf("%s: %d <time> in %s, want %d", tt.name, n, tt.where, tt.times)
		}
		if got := strings.Join(strings.Fields(sel.Text()), " "); got != strings.Join(strings.Fields(tt.text), " ") {
			t.Errorf("%s: text %q, want %q", tt.name, got, tt.text)
		}
	}
}
