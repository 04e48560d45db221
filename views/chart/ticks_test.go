package chart

import (
	"slices"
	"testing"
	"time"
)

func TestNiceTicks(t *testing.T) {
	tests := []struct {
		name   string
		lo, hi float64
		u      Units
		labels []string
	}{
		{"counts from zero", 0, 87, Count("ops/s"), []string{"0", "20", "40", "60", "80", "100"}},
		{"thousands get k", 0, 4200, Count("ops/s"), []string{"0", "1k", "2k", "3k", "4k", "5k"}},
		{"fractions keep their decimals", 0, 0.7, Count("ops/s"), []string{"0", "1"}},
		{"plain fractions", 0, 0.7, Plain("ms"), []string{"0", "0.2", "0.4", "0.6", "0.8"}},
		{"memory in MiB", 1 << 20, 3 << 20, Memory(), []string{"1.0 MiB", "1.5 MiB", "2.0 MiB", "2.5 MiB", "3.0 MiB"}},
		{"memory not from zero", 900 << 10, 1000 << 10, Memory(), []string{"900 KiB", "920 KiB", "940 KiB", "960 KiB", "980 KiB", "1000 KiB"}},
		{"a flat zero series", 0, 0, Count("keys"), []string{"0", "1"}},
		{"a flat series", 500, 500, Count("keys"), []string{"440", "460", "480", "500", "520", "540", "560"}},
		{"reversed bounds", 10, 0, Plain("ms"), []string{"0", "2", "4", "6", "8", "10"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := NiceTicks(tc.lo, tc.hi, 5, tc.u)
			if !slices.Equal(got.Labels, tc.labels) {
				t.Fatalf("labels = %q, want %q", got.Labels, tc.labels)
			}
			if got.Lo > min(tc.lo, tc.hi) || got.Hi < max(tc.lo, tc.hi) {
				t.Fatalf("axis %v..%v does not cover %v..%v", got.Lo, got.Hi, tc.lo, tc.hi)
			}
			if got.Values[0] != got.Lo || got.Values[len(got.Values)-1] != got.Hi {
				t.Fatalf("ends %v..%v are not ticks %v", got.Lo, got.Hi, got.Values)
			}
		})
	}
}

func TestAgoTicks(t *testing.T) {
	tests := []struct {
		span   time.Duration
		labels []string
	}{
		{time.Hour, []string{"now", "−15m", "−30m", "−45m", "−1h"}},
		{5 * time.Minute, []string{"now", "−1m", "−2m", "−3m", "−4m", "−5m"}},
		{90 * time.Second, []string{"now", "−30s", "−1m", "−1m30s"}},
		{6 * time.Hour, []string{"now", "−2h", "−4h", "−6h"}},
		{3 * 24 * time.Hour, []string{"now", "−1d", "−2d", "−3d"}},
		{0, []string{"now"}},
	}
	for _, tc := range tests {
		var got []string
		for _, d := range AgoTicks(tc.span, 5) {
			got = append(got, AgoLabel(d))
		}
		if !slices.Equal(got, tc.labels) {
			t.Errorf("AgoTicks(%v) = %q, want %q", tc.span, got, tc.labels)
		}
	}
}

func TestAgoLabel(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "now", 45 * time.Second: "−45s", 5 * time.Minute: "−5m", 150 * time.Second: "−2m30s", 2 * time.Hour: "−2h",
		90 * time.Minute: "−1h30m", 50 * time.Hour: "−2d",
	} {
		if got := AgoLabel(d); got != want {
			t.Errorf("AgoLabel(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestValue(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		u    Units
		want string
	}{
		{12, Count("keys"), "12"}, {2.5, Count("ops/s"), "2.5"}, {1500, Count("ops/s"), "1.5k"},
		{25000, Count("ops/s"), "25k"}, {3 << 20, Memory(), "3.0 MiB"}, {512, Memory(), "512 B"},
		{0.25, Plain("ms"), "0.25"}, {40, Plain("ms"), "40"},
	} {
		if got := Value(tc.v, tc.u); got != tc.want {
			t.Errorf("Value(%v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}
