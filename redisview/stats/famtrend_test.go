package stats

import (
	"testing"
	"time"

	"github.com/keydeck/keydeck/redisview/schema"
)

func TestFamilyHourRing(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 15, 0, 0, 0, time.UTC)
	a, b := &schema.Family{ID: "a"}, &schema.Family{ID: "b"}
	pass := func(na, nb int64) map[*schema.Family]*FamilyStats {
		return map[*schema.Family]*FamilyStats{a: {Family: a, Count: na, Sampled: na, Sums: SampleSums{MemN: na, MemSum: float64(na * 100)}}, b: {Family: b, Count: nb}}
	}
	type step struct {
		at      time.Duration
		na      int64
		wantLen int
		wantA0  int64 // first kept pass's count of a
		wantAt0 time.Duration
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"one pass", []step{{0, 5, 1, 5, 0}}},
		{"same bin replaces", []step{{0, 5, 1, 5, 0}, {2 * time.Second, 6, 1, 6, 2 * time.Second}, {9 * time.Second, 7, 1, 7, 9 * time.Second}}},
		{"next bin appends", []step{{0, 5, 1, 5, 0}, {TrendStep, 6, 2, 5, 0}}},
		{"older than the hour is forgotten", []step{{0, 5, 1, 5, 0}, {TrendStep, 6, 2, 5, 0}, {TrendSpan + TrendStep, 8, 2, 6, TrendStep}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var tr famTrend
			for i, s := range tc.steps {
				tr.add(t0.Add(s.at), pass(s.na, 1), i%2 == 0)
				got := tr.copy()
				if len(got) != s.wantLen || got[0].Families["a"].Count != s.wantA0 || !got[0].At.Equal(t0.Add(s.wantAt0)) {
					t.Fatalf("step %d: %+v", i, got)
				}
				last := got[len(got)-1]
				if last.Families["a"] != (FamilyPoint{Count: s.na, Memory: s.na * 100}) || last.Families["b"].Count != 1 || last.MemoryKnown != (i%2 == 0) {
					t.Fatalf("step %d last: %+v", i, last)
				}
			}
		})
	}
	// A pass every two seconds for two hours keeps one pass per bin of
	// the last hour, and a copy is the caller's own.
	var tr famTrend
	for d := time.Duration(0); d <= 2*TrendSpan; d += 2 * time.Second {
		tr.add(t0.Add(d), pass(int64(d/time.Second), 0), true)
	}
	got := tr.copy()
	if n := len(got); n > int(TrendSpan/TrendStep)+1 || n < int(TrendSpan/TrendStep) {
		t.Fatalf("kept %d passes", n)
	}
	got[0].Families["a"] = FamilyPoint{Count: -1}
	if tr.passes[0].Families["a"].Count == -1 {
		t.Fatal("copy shares its maps")
	}
}
