package schema

import (
	"testing"
	"time"
)

func TestNextPeriod(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	kolkata, err := time.LoadLocation("Asia/Kolkata")
	if err != nil {
		t.Fatal(err)
	}
	utc := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, tc := range []struct {
		period string
		loc    *time.Location
		now    string
		want   string // "" for the zero time
	}{
		{"day", time.UTC, "2026-11-29T14:30:05Z", "2026-11-30T00:00:00Z"},
		{"day", time.UTC, "2026-11-29T00:00:00Z", "2026-11-30T00:00:00Z"},
		{"day", time.UTC, "2026-12-31T23:59:59Z", "2027-01-01T00:00:00Z"},
		{"day", time.UTC, "2028-02-28T12:00:00Z", "2028-02-29T00:00:00Z"},
		// Berlin is UTC+1 in winter: its next midnight is 23:00 UTC.
		{"day", berlin, "2026-11-29T14:30:00Z", "2026-11-29T23:00:00Z"},
		// 23:30 UTC is already the 30th in Berlin.
		{"day", berlin, "2026-11-29T23:30:00Z", "2026-11-30T23:00:00Z"},
		// Across the spring change (29 March 2026): midnight after is UTC+2.
		{"day", berlin, "2026-03-29T10:00:00Z", "2026-03-29T22:00:00Z"},
		{"day", kolkata, "2026-11-29T20:00:00Z", "2026-11-30T18:30:00Z"},
		{"month", time.UTC, "2026-11-29T14:30:05Z", "2026-12-01T00:00:00Z"},
		{"month", time.UTC, "2026-12-15T00:00:00Z", "2027-01-01T00:00:00Z"},
		{"month", time.UTC, "2026-01-31T23:59:59Z", "2026-02-01T00:00:00Z"},
		{"month", berlin, "2026-11-30T23:30:00Z", "2026-12-31T23:00:00Z"},
		{"week", time.UTC, "2026-11-29T14:30:05Z", ""},
		{"", time.UTC, "2026-11-29T14:30:05Z", ""},
	} {
		got := NextPeriod(tc.period, tc.loc, utc(tc.now))
		if tc.want == "" {
			if !got.IsZero() {
				t.Errorf("NextPeriod(%q, %s, %s) = %v, want zero", tc.period, tc.loc, tc.now, got)
			}
			continue
		}
		if want := utc(tc.want); !got.Equal(want) || got.Location() != time.UTC {
			t.Errorf("NextPeriod(%q, %s, %s) = %v, want %v UTC", tc.period, tc.loc, tc.now, got, want)
		}
	}
}
