package apiv1

import (
	"testing"
	"time"

	"github.com/keydeck/keydeck/redisview/stats"
)

// total is a floor: only completed passes' counts are in it; a first
// pass's scaled estimate (which may overshoot) is its database's own.
func TestViolationsTotalCountsOnlyExactDatabases(t *testing.T) {
	p := pack(t, "eisland")
	done := time.Date(2026, 12, 2, 5, 0, 0, 0, time.UTC)
	page := Violations("eisland", []stats.DBDetail{
		{DB: 2, CompletedAt: done, ViolCount: 3},
		{DB: 4, Estimated: true, Coverage: 0.1, ViolCount: 50},
		{DB: 6},
	}, matched(p), up(), "")
	if page.Total != 3 || page.Complete {
		t.Fatalf("total %d complete %v, want 3 and not complete", page.Total, page.Complete)
	}
	want := []string{"exact", "estimated", "not_known"}
	for i, d := range page.Databases.Items {
		if d.Figures != want[i] {
			t.Errorf("db%d figures %q, want %q", d.DB, d.Figures, want[i])
		}
	}
	if c := page.Databases.Items[1].Violations.Count; c == nil || *c != 50 {
		t.Errorf("the estimated database's own count: %v, want 50", c)
	}
	if page.Databases.Items[2].Violations.Count != nil {
		t.Error("a database whose pass read nothing has a count")
	}
}

// A completed pass's violations scaled from a family's sample are in
// total, which says it holds estimates.
func TestViolationsSaysSampledCountsAreEstimated(t *testing.T) {
	p := pack(t, "eisland")
	done := time.Date(2026, 12, 2, 5, 0, 0, 0, time.UTC)
	page := Violations("eisland", []stats.DBDetail{
		{DB: 2, CompletedAt: done, ViolCount: 3, Families: []stats.FamilyStats{{Family: p.Families[0], Count: 10, Violations: 3}}},
		{DB: 4, CompletedAt: done, ViolCount: 900, Families: []stats.FamilyStats{{Family: p.Families[0], Count: 90000, Sampled: 2000, Violations: 900, ViolationsEstimated: true}}},
	}, matched(p), up(), "")
	if page.Total != 903 || !page.TotalEst {
		t.Fatalf("total %d estimated %v", page.Total, page.TotalEst)
	}
	if page.Databases.Items[0].Violations.Estimated || !page.Databases.Items[1].Violations.Estimated {
		t.Errorf("databases %+v", page.Databases.Items)
	}
	has(t, page, `"total_estimated":true`, `"count_estimated":true`)
	conforms(t, page)
}
