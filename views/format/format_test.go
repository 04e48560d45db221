package format

import (
	"math"
	"testing"
	"time"

	"github.com/keydeck/keydeck/redisview/schema"
)

func TestDuration(t *testing.T) {
	for _, tc := range []struct {
		in   time.Duration
		want string
	}{
		{0, "0ms"},
		{850 * time.Millisecond, "850ms"},
		{time.Second, "1s"},
		{59 * time.Second, "59s"},
		{90 * time.Second, "1m 30s"},
		{4*time.Minute + 10*time.Second, "4m 10s"},
		{time.Hour, "1h"},                 // not "1h 0m"
		{time.Hour + 5*time.Second, "1h"}, // a zero second unit ends it
		{time.Hour + 30*time.Minute, "1h 30m"},
		{25 * time.Hour, "1d 1h"}, // not "25h 0m"
		{48 * time.Hour, "2d"},
		{3*24*time.Hour + 4*time.Hour + 59*time.Minute, "3d 4h"},
		{365 * 24 * time.Hour, "365d"},
		{-90 * time.Second, "-1m 30s"},
		// Below: figures redisview/action writes into previews and audit
		// texts, which had a formatter of their own until issue 18.
		{76 * time.Hour, "3d 4h"},
		{10 * time.Minute, "10m"},
		{-5 * time.Second, "-5s"}, // action.FormatTTL wrote "-5000ms"
		{-850 * time.Millisecond, "-850ms"},
		{math.MinInt64, "-106751d 23h"},
	} {
		if got := Duration(tc.in); got != tc.want {
			t.Errorf("Duration(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestTTL(t *testing.T) {
	for _, tc := range []struct {
		in   time.Duration
		want string
	}{
		{-1, "no TTL"},
		{-2, "no TTL"},
		{0, "0ms"},
		{time.Hour, "1h"},
	} {
		if got := TTL(tc.in); got != tc.want {
			t.Errorf("TTL(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
	for _, tc := range []struct {
		in   int64
		want string
	}{
		{-2, "absent"},
		{-1, "no TTL"},
		{1500, "1s"},
		{3_600_000, "1h"},
	} {
		if got := PTTL(tc.in); got != tc.want {
			t.Errorf("PTTL(%d) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestUptime(t *testing.T) {
	for _, tc := range []struct {
		in   time.Duration
		want string
	}{
		{0, "under a minute"},
		{59 * time.Second, "under a minute"},
		{61 * time.Second, "1m"}, // whole minutes: the tile changes once a minute
		{2*time.Hour + 3*time.Minute + 4*time.Second, "2h 3m"},
		{30 * time.Hour, "1d 6h"},
	} {
		if got := Uptime(tc.in); got != tc.want {
			t.Errorf("Uptime(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestCounts(t *testing.T) {
	for _, tc := range []struct {
		in   int64
		want string
	}{
		{0, "0"}, {7, "7"}, {999, "999"}, {1000, "1,000"}, {1234567, "1,234,567"},
		{-1234, "-1,234"}, {-100, "-100"},
		{math.MaxInt64, "9,223,372,036,854,775,807"},
		{math.MinInt64, "-9,223,372,036,854,775,808"},
	} {
		if got := Count(tc.in); got != tc.want {
			t.Errorf("Count(%d) = %q, want %q", tc.in, got, tc.want)
		}
	}
	for _, tc := range []struct {
		got, want string
	}{
		{Plural(0, "field", "fields"), "0 fields"},
		{Plural(1, "field", "fields"), "1 field"},
		{Plural(2, "field", "fields"), "2 fields"},
		{Plural(1200, "entry", "entries"), "1,200 entries"},
		{ByteCount(1), "1 byte"}, // not "1 bytes"
		{ByteCount(1048576), "1,048,576 bytes"},
		{Size(1, "string"), "1 byte"},
		{Size(12, "hash"), "12 fields"},
		{Size(1, "hash"), "1 field"},
		{Size(3, "list"), "3 items"},
		{Size(1, "set"), "1 member"},
		{Size(1000, "zset"), "1,000 members"}, // not "elements" on one page and "members" on another
		{Size(2, "stream"), "2 entries"},
		{Size(2, "ReJSON-RL"), "2 elements"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

func TestBytes(t *testing.T) {
	for _, tc := range []struct {
		in   int64
		want string
	}{
		{0, "0 B"},
		{1, "1 B"},
		{1023, "1023 B"},
		{1024, "1.0 KiB"},
		{1229, "1.2 KiB"},
		{1048575, "1.0 MiB"}, // not "1024.0 KiB"
		// The last size shown in KiB, and the first that one decimal would
		// round to 1024.0 KiB (redisview.FormatBytes wrote "1024.0 KiB").
		{1048524, "1023.9 KiB"},
		{1048525, "1.0 MiB"},
		{64 << 10, "64.0 KiB"}, // action: longest key name
		{64 << 20, "64.0 MiB"}, // bans: largest bloom rebuilt
		{5 << 20, "5.0 MiB"},
		{2 << 30, "2.0 GiB"},
		{3 << 40, "3.0 TiB"},
		{math.MaxInt64, "8.0 EiB"},
		{-2048, "-2.0 KiB"},
	} {
		if got := Bytes(tc.in); got != tc.want {
			t.Errorf("Bytes(%d) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestScore(t *testing.T) {
	for _, tc := range []struct {
		in   float64
		want string
	}{
		{0, "0"},
		{42, "42"},
		{1e6, "1,000,000"}, // not "1e+06"
		{-1500, "-1,500"},
		{1234.5, "1,234.5"},
		{0.125, "0.125"},
		{-0.5, "-0.5"},
		{1e15, "1,000,000,000,000,000"},
		{1e20, "100,000,000,000,000,000,000"},
		{1e21, "1e+21"},
		{-3.5e300, "-3.5e+300"},
		{math.Inf(1), "+inf"},
		{math.Inf(-1), "-inf"},
		{math.NaN(), "nan"},
	} {
		if got := Score(tc.in); got != tc.want {
			t.Errorf("Score(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestRateAndPercent(t *testing.T) {
	for _, tc := range []struct {
		got, want string
	}{
		{Rate(0), "0.0"},
		{Rate(12.34), "12.3"},
		{Rate(99.94), "99.9"},
		{Rate(1234.4), "1,234"},
		{Percent(0.5, 0), "50%"},
		{Percent(0.1234, 1), "12.3%"},
		{Percent(1, 1), "100.0%"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

func TestTimesAreUTC(t *testing.T) {
	zone := time.FixedZone("UTC+8", 8*3600)
	at := time.Date(2026, 11, 29, 22, 30, 5, 999e6, zone)
	for _, tc := range []struct {
		got, want string
	}{
		{Time(at), "2026-11-29 14:30:05 UTC"},
		{Clock(at), "14:30:05 UTC"},
		{EpochMillis(at.UnixMilli()), "2026-11-29 14:30:05 UTC"},
		{EpochMillis(0), "1970-01-01 00:00:00 UTC"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

// A TTL rule and its violations, as the domain returns them, written with
// the one duration writer ("1m 30s", not Go's "1m30s").
func TestTTLPolicyAndViolation(t *testing.T) {
	for p, want := range map[schema.TTLPolicy]string{
		{Kind: schema.TTLNone}:                                                   "none",
		{Kind: schema.TTLAny}:                                                    "any",
		{Kind: schema.TTLRequired}:                                               "required",
		{Kind: schema.TTLRequired, Max: 30 * 24 * time.Hour}:                     "≤ 30d",
		{Kind: schema.TTLRequired, Min: time.Minute}:                             "≥ 1m",
		{Kind: schema.TTLRequired, Min: 10 * time.Second, Max: 90 * time.Second}: "10s–1m 30s",
	} {
		if got := TTLPolicy(p); got != want {
			t.Errorf("TTLPolicy(%+v) = %q, want %q", p, got, want)
		}
	}
	for v, want := range map[schema.TTLViolation]string{
		{}: "",
		{Fault: schema.TTLUnwanted, TTL: time.Hour}:                                 "has a TTL (1h), pack says persistent",
		{Fault: schema.TTLMissing, TTL: -1}:                                         "no TTL, pack requires one",
		{Fault: schema.TTLAboveMax, TTL: 20 * time.Second, Bound: 15 * time.Second}: "TTL 20s above the expected maximum 15s",
		{Fault: schema.TTLBelowMin, TTL: 5 * time.Second, Bound: 10 * time.Second}:  "TTL 5s below the expected minimum 10s",
	} {
		if got := TTLViolation(v); got != want {
			t.Errorf("TTLViolation(%+v) = %q, want %q", v, got, want)
		}
	}
}
