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

// Every figure says whether it is exact or estimated, and from how many
// keys: a family read whole has no margin, a sampled one its 95% margin,
// sample and TTL reads; the sweep's method, cost and live counts are
// numbers and times.
func TestDBStatsSaysWhatIsSampled(t *testing.T) {
	p := pack(t, "eisland")
	small := p.Family("slider-rate-create-account")
	big := *p.Families[0]
	big.ID, big.Domain = "weather", "cache"
	since := t0.Add(-time.Hour)
	d := stats.DBDetail{Conn: "eisland", DB: 4, TotalKeys: redisview.Some[int64](5_300_800), Pass: 2, CompletedAt: t0.Add(-time.Minute),
		SampleSize: 2000, ReadWhole: 4800, TTLOnly: 4_998_000, CPU: 0.008, CountsLive: true, CountsSince: since,
		Families: []stats.FamilyStats{
			{Family: &big, Count: 5_000_000, Memory: 1_300_000_000, MemoryErr: 26_000_000, Sampled: 2000, TTLRead: 2000, Violations: 7500, ViolationsEstimated: true},
			{Family: small, Count: 800, Memory: 96_000, Sampled: 800, TTLRead: 800, Violations: 3},
		},
		Domains:   []stats.DomainStats{{Domain: "cache", Count: 5_000_000, Memory: 1_300_000_000}, {Domain: small.Domain, Count: 800, Memory: 96_000}},
		ViolCount: 7503, UnmCount: 300_000, UnmMemory: 30_000_000, UnmSampled: 2000, UnmMemoryErr: 600_000,
		Memory: 1_330_096_000, MemoryErr: 26_006_923, ReadPath: "pipelines",
	}
	page := DBStats(d, matched(p), up(), t0)
	if page.SampledKeys != 4800 || page.Biggest.Of != 4800 || *page.MemoryErr != 26_006_923 {
		t.Errorf("sampled %d, biggest of %d, memory ± %d", page.SampledKeys, page.Biggest.Of, *page.MemoryErr)
	}
	fb, fs := page.Families[0], page.Families[1]
	if *fb.MemoryErr != 26_000_000 || fb.Sampled != 2000 || fb.TTLRead != 2000 || !fb.ViolEst {
		t.Errorf("sampled family %+v", fb)
	}
	if *fs.MemoryErr != 0 || fs.Sampled != fs.Keys || fs.TTLRead != fs.Keys || fs.ViolEst {
		t.Errorf("family read whole %+v", fs)
	}
	if *page.Domains[0].MemoryErr != 26_000_000 || *page.Domains[1].MemoryErr != 0 || *page.Unmatched.MemoryErr != 600_000 || page.Unmatched.Sampled != 2000 {
		t.Errorf("domains %+v unmatched %+v", page.Domains, page.Unmatched)
	}
	if !page.Violations.Estimated {
		t.Error("violations scaled from a sample are not said to be estimated")
	}
	s := page.Sweep
	if s.SampleSize != 2000 || s.ReadWhole != 4800 || s.TTLOnly != 4_998_000 || *s.CPUShare != 0.008 || !s.CountsLive || !s.CountsSince.Equal(since) || s.ReadPath != "pipelines" {
		t.Errorf("sweep %+v", s)
	}
	has(t, page, `"memory_error_bytes":26000000`, `"sampled_keys":2000`, `"ttl_read_keys":800`, `"violations_estimated":true`,
		`"count_estimated":true`, `"of_keys":4800`, `"cpu_share":0.008`, `"counts_live":true`, `"counts_since":"2026-12-01T19:00:00Z"`, `"sample_size":2000`)
	hasNot(t, page, append(displayStrings, `"counts_why"`)...)
	conforms(t, page)

	// Read whole: every margin 0, nothing estimated; without events the
	// counts say why they are not live, and no cost is claimed unknown.
	d.Families, d.Domains = d.Families[1:], d.Domains[1:]
	d.UnmCount, d.UnmMemory, d.UnmSampled, d.UnmMemoryErr, d.Memory, d.MemoryErr, d.ViolCount = 0, 0, 0, 0, 96_000, 0, 3
	d.CPU, d.CountsLive, d.CountsWhy = 0, false, "keyspace notifications are off"
	page = DBStats(d, matched(p), up(), t0)
	if *page.MemoryErr != 0 || page.Violations.Estimated || page.Sweep.CPUShare != nil || page.Sweep.CountsSince != nil || page.Sweep.CountsWhy == "" {
		t.Errorf("exact page %+v sweep %+v", page, page.Sweep)
	}
	has(t, page, `"memory_error_bytes":0`, `"count_estimated":false`, `"counts_live":false`)
	conforms(t, page)
}

// Memory not available: no margin either.
func TestDBStatsNoMemoryNoMargin(t *testing.T) {
	p := pack(t, "eisland")
	d := stats.DBDetail{Conn: "eisland", DB: 4, Pass: 1, CompletedAt: t0, MemoryWhy: "MEMORY refused",
		Families: []stats.FamilyStats{{Family: p.Families[0], Count: 10, Sampled: 10, TTLRead: 10}}}
	page := DBStats(d, matched(p), up(), t0)
	hasNot(t, page, `"memory_error_bytes"`, `"memory_bytes"`)
	conforms(t, page)
}
