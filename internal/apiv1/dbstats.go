package apiv1

import (
	"math"
	"strings"
	"time"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/redisview/stats"
)

// DBStatsPage mirrors a database's statistics page (handlers/dbstats.go):
// keys and memory per family and domain, TTL health, keys that break
// their family's rules, unmatched prefixes and the biggest keys, from the
// database's sweep. Meant for GET /api/v1/connections/{conn}/db/{n}/stats.
type DBStatsPage struct {
	Conn      string     `json:"conn" doc:"The connection's name." example:"eisland"`
	DB        int        `json:"db" minimum:"0" doc:"The database." example:"4"`
	Redis     RedisState `json:"redis" doc:"Whether the server answers; when down the figures are from the last completed pass, or not known."`
	Pack      PackState  `json:"pack" doc:"The schema pack that explains the keys."`
	TotalKeys *int64     `json:"total_keys,omitempty" minimum:"0" doc:"Keys in the database (INFO keyspace or DBSIZE); absent when not known (see total_keys_why)."`
	TotalWhy  string     `json:"total_keys_why,omitempty" doc:"Why total_keys is absent."`
	Sweep     DBSweep    `json:"sweep" doc:"How exact the figures are."`
	// Figures says whether the counts below are exact, estimated or not
	// known: a zero then is no statement about the data.
	Figures     string        `json:"figures" enum:"exact,estimated,not_known" doc:"exact: from a completed pass (key counts exact; memory, TTL and type violations are exact or estimated from a sample per family, as each figure's own fields say); estimated: scaled from a partial first pass; not_known: no pass completed (violations and unmatched counts are absent, the lists empty)."`
	Memory      *int64        `json:"memory_bytes,omitempty" minimum:"0" doc:"Memory of the keys swept; absent when not available (see memory_why). Exact when every key was read whole (memory_error_bytes 0), else the families' and unmatched keys' sampled estimates added up."`
	MemoryErr   *int64        `json:"memory_error_bytes,omitempty" minimum:"0" doc:"Half-width of memory_bytes's 95% confidence interval, in bytes; 0 when exact; absent with memory_bytes." example:"25165824"`
	SampledKeys int64         `json:"sampled_keys" minimum:"0" doc:"Keys of the pass shown read whole (type, TTL, size, memory): the families' and unmatched keys' samples. Memory, sizes and the biggest keys come from them." example:"6000"`
	MemoryWhy   string        `json:"memory_why,omitempty" doc:"Why memory per key is not available (MEMORY USAGE refused)."`
	MemoryEst   int64         `json:"memory_estimated_keys" minimum:"0" doc:"Keys whose memory is Redis's estimate from a bounded sample."`
	Families    []DBFamily    `json:"families" nullable:"false" doc:"Per family, by key count descending."`
	Domains     []DBDomain    `json:"domains" nullable:"false" doc:"Per domain, by key count descending."`
	Unmatched   DBUnmatched   `json:"unmatched" doc:"Keys no family of the pack explains."`
	Violations  DBViolations  `json:"violations" doc:"Keys that break their family's rules (type, TTL)."`
	Biggest     DBBiggestKeys `json:"biggest" doc:"The biggest keys the sweep has seen."`
	Error       string        `json:"error,omitempty" doc:"The sweep's last error; absent when its last step succeeded."`
}

// Sweep states of a database.
const (
	DBSweepEstimating = "estimating"
	DBSweepSweeping   = "sweeping"
	DBSweepRunning    = "running"
	DBSweepUnchanged  = "unchanged"
)

// DBSweep is where the database's sweep stands.
type DBSweep struct {
	State          string     `json:"state" enum:"estimating,sweeping,running,unchanged" doc:"estimating: the first pass runs, figures are scaled from coverage; sweeping: the first pass runs, nothing to show yet; running: a pass completed (completed_at), the next runs; unchanged: no write since the last pass, so none runs (the figures are current)."`
	Passes         int        `json:"passes" minimum:"0" doc:"Passes completed."`
	Seen           int64      `json:"seen" minimum:"0" doc:"Keys read by the running pass."`
	Coverage       *float64   `json:"coverage,omitempty" minimum:"0" maximum:"1" doc:"Share of the keys the partial first pass has read; only while estimating."`
	CompletedAt    *time.Time `json:"completed_at,omitempty" doc:"When the pass shown completed; absent before one did."`
	AgeMs          *int64     `json:"age_ms,omitempty" minimum:"0" doc:"Since completed_at; absent before a pass completed."`
	UnchangedSince *time.Time `json:"unchanged_since,omitempty" doc:"Since when nothing changed; only when unchanged."`
	KeysPerSec     int        `json:"keys_per_sec" minimum:"0" doc:"The sweep's budget: keys read per second." example:"2000"`
	ScanCount      int        `json:"scan_count" minimum:"0" doc:"SCAN COUNT per step." example:"200"`
	ReadPath       string     `json:"read_path" enum:"script,pipelines,unknown" doc:"How keys are read: pipelines; unknown before the first step. script (one read-only script per SCAN page) is no longer produced: pipelines cost Redis less, so the sweep has no script path."`
	ReadPathWhy    string     `json:"read_path_why,omitempty" doc:"A note on the read path, when the sweep gives one."`
	// Sampling (issue 24): what a pass reads of each key.
	SampleSize  int        `json:"sample_size" minimum:"0" doc:"Keys of each family (and of the unmatched keys) a pass reads whole: the first ones in SCAN order. A family of at most this many keys is read entirely, its figures exact; 0 when not known." example:"2000"`
	ReadWhole   int64      `json:"read_whole_keys" minimum:"0" doc:"Keys the running or last pass read whole (type, TTL, size, memory)." example:"6000"`
	TTLOnly     int64      `json:"ttl_only_keys" minimum:"0" doc:"Keys the running or last pass read only the TTL of (PTTL, in families with a TTL rule); every other key is counted from its name alone." example:"4998000"`
	CPUShare    *float64   `json:"cpu_share,omitempty" minimum:"0" doc:"Estimated share of one Redis core the sweep costs while it runs (0.008: 0.8%), from its commands and what each costs Redis; absent when not known." example:"0.008"`
	CountsLive  bool       `json:"counts_live" doc:"Keyspace events keep the key counts current between passes (since counts_since); else the counts are those of completed_at."`
	CountsSince *time.Time `json:"counts_since,omitempty" doc:"Since when keyspace events keep the counts current; only with counts_live."`
	CountsWhy   string     `json:"counts_why,omitempty" doc:"Why the counts are not kept current between passes, when they cannot be."`
}

// DBFamily is one family's keys in the database.
type DBFamily struct {
	FamilyRef
	Type       string    `json:"type" doc:"The Redis type the pack gives." example:"hash"`
	Pattern    string    `json:"pattern" doc:"The family's key pattern."`
	Sensitive  bool      `json:"sensitive" doc:"The family's values are never read or sent."`
	TTLPolicy  TTLPolicy `json:"ttl_policy" doc:"The pack's TTL rule for the family."`
	Keys       int64     `json:"keys" minimum:"0" doc:"Exact: every key counted from its name (scaled from coverage while figures are estimated)."`
	Memory     *int64    `json:"memory_bytes,omitempty" minimum:"0" doc:"Absent when memory is not available. Exact when sampled_keys equals keys, else the sample's mean times keys (see memory_error_bytes)."`
	MemoryErr  *int64    `json:"memory_error_bytes,omitempty" minimum:"0" doc:"Half-width of memory_bytes's 95% confidence interval, in bytes; 0 when exact; absent with memory_bytes." example:"26214400"`
	Sampled    int64     `json:"sampled_keys" minimum:"0" doc:"Keys of the family read whole (type, TTL, size, memory): the first sample_size in SCAN order, or all of them." example:"2000"`
	MemEstKeys int64     `json:"memory_estimated_keys" minimum:"0" doc:"Keys of the family read whole whose memory is itself an extrapolation (MEMORY USAGE … SAMPLES 5 of a big collection, or Keydeck's estimate of a big hash table): memory_bytes is then not exact even when sampled_keys equals keys." example:"0"`
	TTLRead    int64     `json:"ttl_read_keys" minimum:"0" doc:"Keys whose TTL was read: every key of a family with a TTL rule, else the sample. ttl is scaled to keys from them." example:"5000000"`
	TTL        TTLHealth `json:"ttl" doc:"Keys per remaining time to live, from ttl_read_keys keys scaled to keys."`
	Violations int64     `json:"violations" minimum:"0" doc:"Keys of the family that break its rules."`
	ViolEst    bool      `json:"violations_estimated" doc:"violations is estimated: type violations found in the sample, scaled to keys (TTL violations are exact where every TTL was read)."`
}

// TTLPolicy is a family's TTL rule.
type TTLPolicy struct {
	Kind  string `json:"kind" enum:"any,none,required" doc:"any: no expectation; none: keys must be persistent; required: keys must expire (within min_ms and max_ms when given)."`
	MinMs *int64 `json:"min_ms,omitempty" minimum:"0" doc:"Lower bound; absent when none."`
	MaxMs *int64 `json:"max_ms,omitempty" minimum:"0" doc:"Upper bound; absent when none."`
}

// TTLHealth counts keys per remaining time to live.
type TTLHealth struct {
	NoTTL    int64 `json:"no_ttl" minimum:"0" doc:"Keys without a TTL."`
	Under1m  int64 `json:"under_1m" minimum:"0"`
	Under10m int64 `json:"under_10m" minimum:"0"`
	Under1h  int64 `json:"under_1h" minimum:"0"`
	Under1d  int64 `json:"under_1d" minimum:"0"`
	Under7d  int64 `json:"under_7d" minimum:"0"`
	Over7d   int64 `json:"over_7d" minimum:"0" doc:"7 days or more."`
}

// DBDomain is one domain's keys in the database.
type DBDomain struct {
	Domain string `json:"domain" example:"Slider CAPTCHA"`
	Keys   int64  `json:"keys" minimum:"0"`
	Memory *int64 `json:"memory_bytes,omitempty" minimum:"0" doc:"Absent when memory is not available."`
	// MemoryErr adds its families' margins (independent samples).
	MemoryErr *int64 `json:"memory_error_bytes,omitempty" minimum:"0" doc:"Half-width of memory_bytes's 95% confidence interval, from its families' (independent samples); 0 when exact; absent with memory_bytes."`
}

// DBUnmatched is the keys no family explains, by leading segments.
type DBUnmatched struct {
	Keys      *int64           `json:"keys,omitempty" minimum:"0" doc:"Absent when not known (figures not_known)."`
	Memory    *int64           `json:"memory_bytes,omitempty" minimum:"0" doc:"Absent when not known or memory is not available."`
	MemoryErr *int64           `json:"memory_error_bytes,omitempty" minimum:"0" doc:"Half-width of memory_bytes's 95% confidence interval; 0 when exact; absent with memory_bytes."`
	Sampled   int64            `json:"sampled_keys" minimum:"0" doc:"Unmatched keys read whole."`
	Prefixes  []UnmatchedGroup `json:"prefixes" nullable:"false" doc:"Up to 100 prefixes; the rest under \"(other prefixes)\"."`
}

// UnmatchedGroup is the unmatched keys sharing a prefix.
type UnmatchedGroup struct {
	Prefix   Name   `json:"prefix"`
	Keys     int64  `json:"keys" minimum:"0"`
	Examples []Name `json:"examples" nullable:"false" doc:"Up to 3 keys."`
}

// DBViolations is the keys that break their family's rules.
type DBViolations struct {
	Count     *int64        `json:"count,omitempty" minimum:"0" doc:"All of them; absent when not known (figures not_known)."`
	Estimated bool          `json:"count_estimated" doc:"count is estimated: some family's type violations are found in its sample and scaled (or the figures are estimated)."`
	Items     []DBViolation `json:"items" nullable:"false" doc:"Up to 100 of them."`
}

// DBViolation is one key that breaks its family's rules.
type DBViolation struct {
	Key     Name   `json:"key"`
	Family  string `json:"family" doc:"The family's id."`
	Problem string `json:"problem" doc:"What is wrong, as the sweep words it." example:"no TTL, pack requires one"`
}

// DBBiggestKeys is the biggest keys seen, by measure.
type DBBiggestKeys struct {
	ByMemory   []BigKey `json:"by_memory" nullable:"false" doc:"Up to 10 keys by memory_bytes."`
	ByElements []BigKey `json:"by_elements" nullable:"false" doc:"Up to 10 collections by elements."`
	ByLength   []BigKey `json:"by_length" nullable:"false" doc:"Up to 10 strings by length in bytes."`
	Of         int64    `json:"of_keys" minimum:"0" doc:"The lists are of the keys read whole (sampled_keys), not of every key: a bigger key may be among the others." example:"6000"`
}

// BigKey is one of the biggest keys seen.
type BigKey struct {
	Key       Name   `json:"key"`
	Family    string `json:"family,omitempty" doc:"The family's id; absent when no family explains the key."`
	Type      string `json:"type" example:"zset"`
	Memory    int64  `json:"memory_bytes" minimum:"0"`
	MemoryEst bool   `json:"memory_estimated" doc:"memory_bytes is Redis's estimate from a bounded sample."`
	Elements  int64  `json:"elements" minimum:"0" doc:"Elements of a collection; a string's length in bytes."`
}

// DBStats maps a database's statistics (stats.Sweeper.Detail) with the
// connection's pack choice and status at now.
func DBStats(d stats.DBDetail, pc redisview.PackChoice, st redisview.Status, now time.Time) DBStatsPage {
	p := DBStatsPage{Conn: d.Conn, DB: d.DB, Redis: redisState(st), Pack: packState(pc), Sweep: dbSweep(d, now), Error: d.Err,
		MemoryWhy: d.MemoryWhy, MemoryEst: d.MemoryEstimated, Families: make([]DBFamily, 0, len(d.Families)), Domains: make([]DBDomain, 0, len(d.Domains))}
	if d.TotalKeys.OK {
		p.TotalKeys = ptr(d.TotalKeys.V)
	} else {
		p.TotalWhy = d.TotalKeys.Why
	}
	mem := func(n int64) *int64 { return optional(n, d.MemoryWhy == "") }
	p.Memory, p.MemoryErr = mem(d.Memory), mem(d.MemoryErr)
	switch {
	case d.Estimated:
		p.Figures = "estimated"
	case d.CompletedAt.IsZero():
		p.Figures = "not_known"
	default:
		p.Figures = "exact"
	}
	known := p.Figures != "not_known"
	domErr := map[string]float64{} // sum of the families' squared margins
	for _, f := range d.Families {
		p.Families = append(p.Families, DBFamily{FamilyRef: familyRef(f.Family, d.DB), Type: f.Family.Type, Pattern: f.Family.Pattern.String(),
			Sensitive: f.Family.Sensitive, TTLPolicy: ttlPolicy(f.Family.TTL), Keys: f.Count, Memory: mem(f.Memory), MemoryErr: mem(f.MemoryErr),
			Sampled: f.Sampled, MemEstKeys: f.MemoryEstimatedKeys, TTLRead: f.TTLRead, TTL: ttlHealth(f.TTL), Violations: f.Violations, ViolEst: f.ViolationsEstimated})
		p.SampledKeys += min(f.Sampled, f.Count)
		domErr[f.Family.Domain] += float64(f.MemoryErr) * float64(f.MemoryErr)
	}
	p.SampledKeys += min(d.UnmSampled, d.UnmCount)
	for _, ds := range d.Domains {
		p.Domains = append(p.Domains, DBDomain{Domain: ds.Domain, Keys: ds.Count, Memory: mem(ds.Memory), MemoryErr: mem(int64(math.Sqrt(domErr[ds.Domain]) + 0.5))})
	}
	unmMem := known && d.MemoryWhy == ""
	p.Unmatched = DBUnmatched{Keys: optional(d.UnmCount, known), Memory: optional(d.UnmMemory, unmMem), MemoryErr: optional(d.UnmMemoryErr, unmMem),
		Sampled: d.UnmSampled, Prefixes: make([]UnmatchedGroup, 0, len(d.Unmatched))}
	for _, u := range d.Unmatched {
		p.Unmatched.Prefixes = append(p.Unmatched.Prefixes, UnmatchedGroup{Prefix: Name(u.Prefix), Keys: u.Count, Examples: names(u.Examples)})
	}
	p.Violations = DBViolations{Count: optional(d.ViolCount, known), Estimated: known && (d.Estimated || sampledViolations(d)), Items: make([]DBViolation, 0, len(d.Violations))}
	for _, v := range d.Violations {
		p.Violations.Items = append(p.Violations.Items, DBViolation{Key: Name(v.Key), Family: v.Family, Problem: v.Problem})
	}
	p.Biggest = DBBiggestKeys{ByMemory: bigKeys(d.ByMemory), ByElements: bigKeys(d.ByElements), ByLength: bigKeys(d.ByLength), Of: p.SampledKeys}
	return p
}

// optional is &n when known, else nil (an omitted field).
func optional(n int64, known bool) *int64 {
	if !known {
		return nil
	}
	return &n
}

func dbSweep(d stats.DBDetail, now time.Time) DBSweep {
	s := DBSweep{Passes: d.Pass, Seen: d.Seen, CompletedAt: timePtr(d.CompletedAt), KeysPerSec: d.Budget.KeysPerSec, ScanCount: d.Budget.Count,
		SampleSize: d.SampleSize, ReadWhole: d.ReadWhole, TTLOnly: d.TTLOnly, CountsLive: d.CountsLive, CountsWhy: d.CountsWhy}
	if d.CPU > 0 {
		s.CPUShare = ptr(d.CPU)
	}
	if d.CountsLive {
		s.CountsSince = timePtr(d.CountsSince)
	}
	if !d.CompletedAt.IsZero() {
		s.AgeMs = ptr(Millis(max(0, now.Sub(d.CompletedAt))))
	}
	switch {
	case d.Estimated:
		s.State, s.Coverage = DBSweepEstimating, ptr(d.Coverage)
	case d.Pass == 0:
		s.State = DBSweepSweeping
	case !d.UnchangedSince.IsZero():
		s.State, s.UnchangedSince = DBSweepUnchanged, timePtr(d.UnchangedSince)
	default:
		s.State = DBSweepRunning
	}
	switch path, why, _ := strings.Cut(d.ReadPath, " ("); {
	case path == "script", path == "pipelines":
		s.ReadPath, s.ReadPathWhy = path, strings.TrimSuffix(why, ")")
	default:
		s.ReadPath = "unknown"
	}
	return s
}

func ttlPolicy(p schema.TTLPolicy) TTLPolicy {
	v := TTLPolicy{Kind: "any", MinMs: msPtr(p.Min, p.Min > 0), MaxMs: msPtr(p.Max, p.Max > 0)}
	switch p.Kind {
	case schema.TTLNone:
		v.Kind = "none"
	case schema.TTLRequired:
		v.Kind = "required"
	}
	return v
}

// ttlHealth maps the histogram of stats.TTLBuckets, in its order.
func ttlHealth(h stats.TTLHistogram) TTLHealth {
	return TTLHealth{NoTTL: h[0], Under1m: h[1], Under10m: h[2], Under1h: h[3], Under1d: h[4], Under7d: h[5], Over7d: h[6]}
}

func bigKeys(bs []stats.BigKey) []BigKey {
	out := make([]BigKey, 0, len(bs))
	for _, b := range bs {
		out = append(out, BigKey{Key: Name(b.Key), Family: b.Family, Type: b.Type, Memory: b.Memory, MemoryEst: b.MemoryEstimated, Elements: b.Elements})
	}
	return out
}
