package apiv1

import (
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
	Figures    string        `json:"figures" enum:"exact,estimated,not_known" doc:"exact: from a completed pass; estimated: scaled from a partial first pass; not_known: no pass completed (violations and unmatched counts are absent, the lists empty)."`
	Memory     *int64        `json:"memory_bytes,omitempty" minimum:"0" doc:"Memory of the keys swept; absent when not available (see memory_why)."`
	MemoryWhy  string        `json:"memory_why,omitempty" doc:"Why memory per key is not available (MEMORY USAGE refused)."`
	MemoryEst  int64         `json:"memory_estimated_keys" minimum:"0" doc:"Keys whose memory is Redis's estimate from a bounded sample."`
	Families   []DBFamily    `json:"families" nullable:"false" doc:"Per family, by key count descending."`
	Domains    []DBDomain    `json:"domains" nullable:"false" doc:"Per domain, by key count descending."`
	Unmatched  DBUnmatched   `json:"unmatched" doc:"Keys no family of the pack explains."`
	Violations DBViolations  `json:"violations" doc:"Keys that break their family's rules (type, TTL)."`
	Biggest    DBBiggestKeys `json:"biggest" doc:"The biggest keys the sweep has seen."`
	Error      string        `json:"error,omitempty" doc:"The sweep's last error; absent when its last step succeeded."`
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
	ReadPath       string     `json:"read_path" enum:"script,pipelines,unknown" doc:"How keys are read: one read-only script per SCAN page, or pipelines; unknown before the first step."`
	ReadPathWhy    string     `json:"read_path_why,omitempty" doc:"Why pipelines are used although scripts are on (the server refused them)."`
}

// DBFamily is one family's keys in the database.
type DBFamily struct {
	FamilyRef
	Type       string    `json:"type" doc:"The Redis type the pack gives." example:"hash"`
	Pattern    string    `json:"pattern" doc:"The family's key pattern."`
	Sensitive  bool      `json:"sensitive" doc:"The family's values are never read or sent."`
	TTLPolicy  TTLPolicy `json:"ttl_policy" doc:"The pack's TTL rule for the family."`
	Keys       int64     `json:"keys" minimum:"0"`
	Memory     *int64    `json:"memory_bytes,omitempty" minimum:"0" doc:"Absent when memory is not available."`
	TTL        TTLHealth `json:"ttl" doc:"Keys per remaining time to live."`
	Violations int64     `json:"violations" minimum:"0" doc:"Keys of the family that break its rules."`
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
}

// DBUnmatched is the keys no family explains, by leading segments.
type DBUnmatched struct {
	Keys     *int64           `json:"keys,omitempty" minimum:"0" doc:"Absent when not known (figures not_known)."`
	Memory   *int64           `json:"memory_bytes,omitempty" minimum:"0" doc:"Absent when not known or memory is not available."`
	Prefixes []UnmatchedGroup `json:"prefixes" nullable:"false" doc:"Up to 100 prefixes; the rest under \"(other prefixes)\"."`
}

// UnmatchedGroup is the unmatched keys sharing a prefix.
type UnmatchedGroup struct {
	Prefix   Name   `json:"prefix"`
	Keys     int64  `json:"keys" minimum:"0"`
	Examples []Name `json:"examples" nullable:"false" doc:"Up to 3 keys."`
}

// DBViolations is the keys that break their family's rules.
type DBViolations struct {
	Count *int64        `json:"count,omitempty" minimum:"0" doc:"All of them; absent when not known (figures not_known)."`
	Items []DBViolation `json:"items" nullable:"false" doc:"Up to 100 of them."`
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
	p.Memory = mem(d.Memory)
	switch {
	case d.Estimated:
		p.Figures = "estimated"
	case d.CompletedAt.IsZero():
		p.Figures = "not_known"
	default:
		p.Figures = "exact"
	}
	known := p.Figures != "not_known"
	for _, f := range d.Families {
		p.Families = append(p.Families, DBFamily{FamilyRef: familyRef(f.Family, d.DB), Type: f.Family.Type, Pattern: f.Family.Pattern.String(),
			Sensitive: f.Family.Sensitive, TTLPolicy: ttlPolicy(f.Family.TTL), Keys: f.Count, Memory: mem(f.Memory), TTL: ttlHealth(f.TTL), Violations: f.Violations})
	}
	for _, ds := range d.Domains {
		p.Domains = append(p.Domains, DBDomain{Domain: ds.Domain, Keys: ds.Count, Memory: mem(ds.Memory)})
	}
	p.Unmatched = DBUnmatched{Keys: optional(d.UnmCount, known), Memory: optional(d.UnmMemory, known && d.MemoryWhy == ""), Prefixes: make([]UnmatchedGroup, 0, len(d.Unmatched))}
	for _, u := range d.Unmatched {
		p.Unmatched.Prefixes = append(p.Unmatched.Prefixes, UnmatchedGroup{Prefix: Name(u.Prefix), Keys: u.Count, Examples: names(u.Examples)})
	}
	p.Violations = DBViolations{Count: optional(d.ViolCount, known), Items: make([]DBViolation, 0, len(d.Violations))}
	for _, v := range d.Violations {
		p.Violations.Items = append(p.Violations.Items, DBViolation{Key: Name(v.Key), Family: v.Family, Problem: v.Problem})
	}
	p.Biggest = DBBiggestKeys{ByMemory: bigKeys(d.ByMemory), ByElements: bigKeys(d.ByElements), ByLength: bigKeys(d.ByLength)}
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
	s := DBSweep{Passes: d.Pass, Seen: d.Seen, CompletedAt: timePtr(d.CompletedAt), KeysPerSec: d.Budget.KeysPerSec, ScanCount: d.Budget.Count}
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
