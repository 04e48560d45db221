package apiv1

import (
	"testing"
	"time"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/stats"
)

func TestDBStatsMapsFiguresAsNumbers(t *testing.T) {
	p := pack(t, "eisland")
	f := p.Family("slider-rate-create-account")
	d := stats.DBDetail{Conn: "eisland", DB: 4, Pack: "eisland", TotalKeys: redisview.Some[int64](13247),
		Pass: 3, CompletedAt: t0.Add(-442 * time.Second), Budget: stats.SweepBudget{KeysPerSec: 2000, Count: 200},
		Families:   []stats.FamilyStats{{Family: f, Count: 13000, Memory: 1 << 20, TTL: stats.TTLHistogram{1, 2, 3, 4, 5, 6, 7}, Violations: 1}},
		Domains:    []stats.DomainStats{{Domain: f.Domain, Count: 13000, Memory: 1 << 20}},
		Violations: []stats.Violation{{Key: "verify:slider:rate:create:account:\xff", Family: f.ID, Problem: "no TTL, pack requires one"}},
		ViolCount:  1, UnmCount: 247, UnmMemory: 4096,
		Unmatched: []stats.PrefixGroup{{Prefix: "tmp:", Count: 247, Examples: []string{"tmp:1"}}},
		ByMemory:  []stats.BigKey{{Key: "big", Type: "zset", Memory: 9 << 20, MemoryEstimated: true, Elements: 100000}},
		Memory:    (1 << 20) + 4096, ReadPath: "pipelines (NOSCRIPT refused)",
	}
	page := DBStats(d, matched(p), up(), t0)
	if page.Figures != "exact" || *page.TotalKeys != 13247 || page.Sweep.State != DBSweepRunning || *page.Sweep.AgeMs != 442000 {
		t.Errorf("page %+v sweep %+v", page, page.Sweep)
	}
	if page.Sweep.ReadPath != "pipelines" || page.Sweep.ReadPathWhy != "NOSCRIPT refused" {
		t.Errorf("read path %q / %q", page.Sweep.ReadPath, page.Sweep.ReadPathWhy)
	}
	fam := page.Families[0]
	if fam.ID != f.ID || fam.TTLPolicy.Kind != "required" || *fam.TTLPolicy.MaxMs != 120000 || fam.TTLPolicy.MinMs != nil || fam.TTL.Over7d != 7 || fam.TTL.NoTTL != 1 {
		t.Errorf("family %+v", fam)
	}
	has(t, page, `"total_keys":13247`, `"memory_bytes":1048576`, `"keys":247`, `"count":1`, `"key":{"b64":`,
		`"completed_at":"2026-12-01T19:52:38Z"`, `"memory_estimated":true`, `"by_elements":[]`, `"by_length":[]`)
	hasNot(t, page, displayStrings...)
	conforms(t, page)
}

// The stats page's TTL histogram is stats.TTLBuckets in order; the
// contract's fields name them. A change to the buckets must show here.
func TestTTLHealthFollowsTheBuckets(t *testing.T) {
	want := []time.Duration{0, time.Minute, 10 * time.Minute, time.Hour, 24 * time.Hour, 7 * 24 * time.Hour, 0}
	if len(stats.TTLBuckets) != len(want) {
		t.Fatalf("%d TTL buckets, the contract has %d", len(stats.TTLBuckets), len(want))
	}
	for i, b := range stats.TTLBuckets {
		if b.Upto != want[i] {
			t.Errorf("bucket %d ends at %v, the contract says %v", i, b.Upto, want[i])
		}
	}
}

func TestDBStatsNotKnownIsNotZero(t *testing.T) {
	d := stats.DBDetail{Conn: "eisland", DB: 4, TotalKeys: redisview.None[int64]("Redis not reachable"), MemoryWhy: "MEMORY refused"}
	down := redisview.Status{Checked: t0, Since: t0, Err: "refused"}
	page := DBStats(d, redisview.PackChoice{Why: "no pack fits"}, down, t0)
	if page.Figures != "not_known" || page.Violations.Count != nil || page.Unmatched.Keys != nil || page.TotalKeys != nil || page.Memory != nil {
		t.Errorf("not-known page %+v", page)
	}
	if page.TotalWhy == "" || page.Sweep.State != DBSweepSweeping || page.Sweep.AgeMs != nil || page.Redis.State != RedisDown || page.Pack.State != PackNone {
		t.Errorf("not-known page %+v", page)
	}
	hasNot(t, page, `"count":0`, `"total_keys"`, `"memory_bytes"`)
	has(t, page, `"families":[]`, `"domains":[]`, `"prefixes":[]`, `"items":[]`, `"by_memory":[]`, `"read_path":"unknown"`)
	conforms(t, page)

	d.Estimated, d.Coverage, d.Seen, d.ViolCount = true, 0.25, 500, 8
	page = DBStats(d, redisview.PackChoice{}, up(), t0)
	if page.Figures != "estimated" || *page.Violations.Count != 8 || *page.Sweep.Coverage != 0.25 || page.Sweep.State != DBSweepEstimating {
		t.Errorf("estimated page %+v", page)
	}
	conforms(t, page)
}
