package handlers

import (
	"testing"
	"time"

	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/redisview/stats"
)

func TestFamilyChartsOfTheHour(t *testing.T) {
	now := time.Date(2026, 12, 2, 15, 0, 0, 0, time.UTC)
	a, b := &schema.Family{ID: "a", Title: "Sessions"}, &schema.Family{ID: "b"}
	d := stats.DBDetail{Families: []stats.FamilyStats{{Family: a, Count: 30}, {Family: b, Count: 4}}}
	if fc := familyCharts(d, now); fc.Keys.Empty == "" || fc.Rate.Empty == "" {
		t.Fatalf("no hour yet: %+v", fc)
	}
	for i := range 3 {
		d.Hour = append(d.Hour, stats.FamilyPass{At: now.Add(time.Duration(i-2) * time.Minute), MemoryKnown: true,
			Families: map[string]stats.FamilyPoint{"a": {Count: int64(10 + 10*i), Memory: 1 << 20}, "b": {Count: 4}}})
	}
	fc := familyCharts(d, now)
	if fc.Keys.Empty != "" || len(fc.Keys.XTicks) == 0 || len(fc.Keys.YTicks) == 0 || len(fc.Keys.Legend) != 2 || fc.Keys.Legend[0].Name != "Sessions" {
		t.Fatalf("keys chart: %+v", fc.Keys)
	}
	if fc.Memory.Empty != "" || len(fc.Memory.YTicks) == 0 {
		t.Fatalf("memory chart: %+v", fc.Memory)
	}
	// Only "a" moved (+10 keys a minute); the rate's axis is keys/min.
	if fc.Rate.Empty != "" || fc.Rate.Unit != "keys/min" || len(fc.Rate.Legend) != 0 || len(fc.Rate.Dots) != 2 {
		t.Fatalf("rate chart: %+v", fc.Rate)
	}
	if got := changeRate(d.Hour, "a"); len(got) != 2 || got[0].V != 10 || got[1].V != 10 {
		t.Fatalf("rate = %+v", got)
	}
}
