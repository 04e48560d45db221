package stats

import (
	"cmp"
	"github.com/keydeck/keydeck/views/format"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/schema"
)

// TTL histogram buckets of remaining time to live.
var TTLBuckets = []struct {
	Label string
	Upto  time.Duration // exclusive upper bound; 0 for the last bucket
}{
	{"no TTL", 0}, {"< 1 min", time.Minute}, {"< 10 min", 10 * time.Minute}, {"< 1 h", time.Hour},
	{"< 1 day", 24 * time.Hour}, {"< 7 days", 7 * 24 * time.Hour}, {"≥ 7 days", 0},
}

// TTLHistogram counts keys per TTLBuckets entry.
type TTLHistogram [7]int64

func ttlBucket(ttl time.Duration) int {
	if ttl < 0 {
		return 0
	}
	for i := 1; i < len(TTLBuckets)-1; i++ {
		if ttl < TTLBuckets[i].Upto {
			return i
		}
	}
	return len(TTLBuckets) - 1
}

// FamilyStats aggregates the keys of one family in one database.
//
// A sweep counts every key from its name alone (SCAN returns it), so Count
// is exact. It reads more of a key only where that is needed: every key's
// TTL (PTTL) where the family declares a TTL rule, and everything (type,
// TTL, length, memory) for a sample — the first SampleSize keys of the
// family in SCAN order, which hashes make a uniform random sample. A family
// of at most SampleSize keys is read whole, and its figures are exact.
type FamilyStats struct {
	Family *schema.Family
	// Count is exact: every key of the family the pass's SCAN returned
	// (plus, with keyspace events, those created and deleted since).
	Count int64
	// Memory is exact when Sampled == Count, else the sample's mean times
	// Count, with MemoryErr its 95% margin.
	Memory int64
	// MemoryErr is the half-width of Memory's 95% confidence interval in
	// bytes (normal approximation with the finite-population correction);
	// 0 when Memory is exact.
	MemoryErr int64
	// Sampled is how many keys were read whole (type, TTL, length, memory).
	Sampled int64
	// MemoryEstimatedKeys counts the keys read whole whose memory is itself
	// an extrapolation (MEMORY USAGE … SAMPLES of a big collection, or
	// Keydeck's estimate of a big hash table): Memory is then not exact
	// even where every key was read.
	MemoryEstimatedKeys int64
	// TTLRead is how many keys' TTL was read: Count for a family with a TTL
	// rule, else Sampled. TTL is scaled to Count from them.
	TTLRead int64
	TTL     TTLHistogram
	// Violations: TTL violations are exact where every key's TTL was read;
	// type violations are found in the sample and scaled to Count
	// (ViolationsEstimated then).
	Violations          int64
	ViolationsEstimated bool

	// Sums are the pass's raw sums, from which the figures above are
	// computed (DBDetail's copy holds them too, for replicas' sharing).
	Sums SampleSums `json:"-"`
}

// DomainStats aggregates a domain's families.
type DomainStats struct {
	Domain string
	Count  int64
	Memory int64
}

// Violation is one key that breaks its pack.
type Violation struct {
	Key     string
	Family  string
	Problem string
}

// PrefixGroup gathers keys no pattern matched, by their leading segments.
type PrefixGroup struct {
	Prefix   string
	Count    int64
	Examples []string
}

// BigKey is one of the biggest keys seen.
type BigKey struct {
	Key      string
	Family   string // "" when unmatched
	Type     string
	Memory   int64
	Elements int64
	// MemoryEstimated: Memory is extrapolated from a bounded sample.
	MemoryEstimated bool
}

const (
	maxViolationsListed = 100
	maxPrefixGroups     = 100
	prefixExamples      = 3
	biggestKeys         = 10
)

// dbAccumulator collects one sweep pass of one database.
type dbAccumulator struct {
	seen       int64 // keys counted (every key SCAN returned that was not gone)
	whole      int64 // of them, read whole
	ttlOnly    int64 // of them, whose only read was PTTL
	memory     int64 // memory of the keys read whole
	memEst     int64 // keys whose memory is a sampled estimate
	fams       map[*schema.Family]*FamilyStats
	violations []Violation
	violCount  int64 // violations found in the keys read (not scaled)
	unmatched  map[string]*PrefixGroup
	unmCount   int64
	unmSampled int64
	unmSums    SampleSums
	byMemory   []BigKey
	byElements []BigKey // collections: hashes, lists, sets, sorted sets, streams
	byLength   []BigKey // strings, whose length is in bytes, not elements
	// sample is how many keys of each family (and of the unmatched keys)
	// the pass reads whole: the first ones SCAN returns.
	sample int
	// cost is what the pass's steps cost Redis (sweepcost.go).
	cost     time.Duration
	started  time.Time
	finished time.Time
}

// add classifies and counts one key. cls may be nil (no pack for the connection).
func (a *dbAccumulator) add(db int, k KeyInfo, cls *schema.Classifier) {
	if k.gone() {
		return
	}
	a.seen++
	whole := k.Read == readWhole
	switch k.Read {
	case readWhole:
		a.whole++
		if k.Memory > 0 {
			a.memory += k.Memory
			if k.MemoryEstimated {
				a.memEst++
			}
		}
	case readTTL:
		a.ttlOnly++
	}
	var fam *schema.Family
	if cls != nil {
		fam, _ = cls.Classify(db, k.Name)
	}
	big := BigKey{Key: k.Name, Type: k.Type, Memory: k.Memory, Elements: k.Elements, MemoryEstimated: k.MemoryEstimated}
	if fam == nil {
		a.unmCount++
		if whole {
			a.unmSampled++
			a.unmSums.addMemory(k.Memory)
		}
		a.group(k.Name)
	} else {
		big.Family = fam.ID
		fs := a.fams[fam]
		if fs == nil {
			fs = &FamilyStats{Family: fam}
			a.fams[fam] = fs
		}
		fs.Count++
		if whole {
			fs.Sampled++
			fs.Sums.addMemory(k.Memory)
			if k.MemoryEstimated && k.Memory > 0 {
				fs.Sums.MemEst++
			}
			if v := fam.TypeViolation(k.Type); v != "" {
				fs.Sums.TypeBad++
				a.violation(k.Name, fam, v)
			}
		}
		if whole || k.Read == readTTL {
			fs.TTLRead++
			fs.Sums.TTL[ttlBucket(k.TTL)]++
			if v := format.TTLViolation(fam.TTL.Violation(k.TTL)); v != "" {
				fs.Sums.TTLBad++
				a.violation(k.Name, fam, v)
			}
		}
	}
	if !whole {
		return
	}
	if k.Memory > 0 {
		a.byMemory = topK(a.byMemory, big, func(b BigKey) int64 { return b.Memory })
	}
	switch {
	case k.Elements <= 0:
	case k.Type == "string":
		a.byLength = topK(a.byLength, big, func(b BigKey) int64 { return b.Elements })
	default:
		a.byElements = topK(a.byElements, big, func(b BigKey) int64 { return b.Elements })
	}
}

// violation lists one key that breaks its family's rules.
func (a *dbAccumulator) violation(key string, fam *schema.Family, problem string) {
	a.violCount++
	if len(a.violations) < maxViolationsListed {
		a.violations = append(a.violations, Violation{Key: key, Family: fam.ID, Problem: problem})
	}
}

// group counts an unmatched key under its prefix.
func (a *dbAccumulator) group(name string) {
	p := prefixOf(name)
	g := a.unmatched[p]
	if g == nil {
		if len(a.unmatched) >= maxPrefixGroups {
			p = "(other prefixes)"
			g = a.unmatched[p]
		}
		if g == nil {
			g = &PrefixGroup{Prefix: p}
			a.unmatched[p] = g
		}
	}
	g.Count++
	if len(g.Examples) < prefixExamples {
		g.Examples = append(g.Examples, name)
	}
}

// prefixOf groups unmatched keys by their first two ':'-separated segments.
func prefixOf(key string) string {
	parts := strings.SplitN(key, ":", 3)
	if len(parts) <= 2 {
		if len(parts) == 1 {
			return "(no colon)"
		}
		return parts[0] + ":*"
	}
	return parts[0] + ":" + parts[1] + ":*"
}

// topK keeps the k largest by size, biggest first.
func topK(list []BigKey, b BigKey, size func(BigKey) int64) []BigKey {
	if len(list) == biggestKeys && size(b) <= size(list[len(list)-1]) {
		return list
	}
	i, _ := slices.BinarySearchFunc(list, b, func(x, y BigKey) int { return cmp.Compare(size(y), size(x)) })
	list = slices.Insert(list, i, b)
	if len(list) > biggestKeys {
		list = list[:biggestKeys]
	}
	return list
}

// DBDetail is the per-database statistics page's data.
type DBDetail struct {
	Conn string
	DB   int
	Pack string // "" when the connection has no pack

	TotalKeys redisview.Opt[int64] // authoritative count (INFO keyspace or DBSIZE)

	// SampleSize is how many keys of each family (and of the unmatched
	// keys) a pass reads whole; the rest are counted from their names, and
	// their TTL read where the family has a TTL rule.
	SampleSize int
	// ReadWhole and TTLOnly count the running or last pass's keys read
	// whole and those whose only read was PTTL; the others were counted
	// from SCAN alone.
	ReadWhole, TTLOnly int64
	// CPU is the share of one Redis core the sweep costs while it runs
	// (0.008: 0.8%), estimated from its commands and what each costs
	// Redis (sweepcost.go, measured by make bench-sweep); 0 when not known.
	CPU float64
	// MemoryErr is the 95% margin of Memory (bytes); 0 when exact.
	MemoryErr int64
	// UnmSampled and UnmMemoryErr are the unmatched keys' sample and the
	// margin of UnmMemory.
	UnmSampled, UnmMemoryErr int64
	// CountsLive is set while keyspace events keep Count current between
	// passes (since CountsSince); CountsWhy says why they do not, when
	// they cannot.
	CountsLive  bool
	CountsSince time.Time
	CountsWhy   string
	// Sweep progress.
	Pass        int   // passes completed
	Seen        int64 // keys read in the running pass
	Estimated   bool  // numbers scaled from a partial first pass
	Coverage    float64
	CompletedAt time.Time // of the pass shown; zero while estimating
	Budget      SweepBudget

	Families   []FamilyStats // by count, descending
	Domains    []DomainStats // by count, descending
	Violations []Violation
	ViolCount  int64
	Unmatched  []PrefixGroup
	UnmCount   int64
	// UnmMemory is the memory of the keys no family explains: with the
	// families' (or the domains'), it adds up to Memory.
	UnmMemory  int64
	ByMemory   []BigKey
	ByElements []BigKey // collections by element count
	ByLength   []BigKey // strings by length in bytes (Elements holds it)
	Memory     int64
	MemoryWhy  string // why memory is unknown, if it is
	// MemoryEstimated counts the keys whose memory is Redis's
	// extrapolation from a bounded sample (large hashtable, skiplist,
	// quicklist and stream values), not an exact figure.
	MemoryEstimated int64
	// ReadPath is how the sweep reads: "pipelines" (SCAN, then pipelined
	// reads); kept for the API's read_path.
	ReadPath string
	// UnchangedSince is set while no new pass runs because nothing changed
	// since the last pass started (then): its figures are current.
	UnchangedSince time.Time
	Err            string
	// Hour is this process's completed passes of the last hour, oldest
	// first (famtrend.go): the database page's per-family charts.
	Hour []FamilyPass `json:"-"`
}

// detail turns an accumulator into the page's data, scaled to total when
// the pass is partial.
func (a *dbAccumulator) detail(d *DBDetail, total int64, partial bool) {
	scale := 1.0
	if partial && a.seen > 0 && total > a.seen {
		scale = float64(total) / float64(a.seen)
		d.Estimated = true
		d.Coverage = float64(a.seen) / float64(total)
	} else {
		d.Coverage = 1
	}
	sc := func(n int64) int64 { return int64(float64(n)*scale + 0.5) }
	d.SampleSize, d.ReadWhole, d.TTLOnly = a.sample, a.whole, a.ttlOnly
	domains := map[string]*DomainStats{}
	var variance float64
	viol := int64(0)
	for _, fs := range a.fams {
		f := fs.figures(scale)
		d.Families = append(d.Families, f)
		d.Memory += f.Memory
		variance += float64(f.MemoryErr) * float64(f.MemoryErr)
		viol += f.Violations
		ds := domains[fs.Family.Domain]
		if ds == nil {
			ds = &DomainStats{Domain: fs.Family.Domain}
			domains[fs.Family.Domain] = ds
		}
		ds.Count += f.Count
		ds.Memory += f.Memory
	}
	slices.SortFunc(d.Families, func(x, y FamilyStats) int {
		return cmp.Or(cmp.Compare(y.Count, x.Count), cmp.Compare(x.Family.ID, y.Family.ID))
	})
	for _, ds := range domains {
		d.Domains = append(d.Domains, *ds)
	}
	slices.SortFunc(d.Domains, func(x, y DomainStats) int {
		return cmp.Or(cmp.Compare(y.Count, x.Count), cmp.Compare(x.Domain, y.Domain))
	})
	d.Violations = slices.Clone(a.violations)
	d.ViolCount = viol
	for _, g := range a.unmatched {
		c := *g
		c.Count = sc(c.Count)
		d.Unmatched = append(d.Unmatched, c)
	}
	slices.SortFunc(d.Unmatched, func(x, y PrefixGroup) int {
		return cmp.Or(cmp.Compare(y.Count, x.Count), cmp.Compare(x.Prefix, y.Prefix))
	})
	d.UnmCount = sc(a.unmCount)
	d.UnmSampled = a.unmSampled
	d.UnmMemory, d.UnmMemoryErr = estimate(a.unmSums.MemN, d.UnmCount, a.unmSums.MemSum, a.unmSums.MemSq, a.unmSums.MemCu)
	d.Memory += d.UnmMemory
	variance += float64(d.UnmMemoryErr) * float64(d.UnmMemoryErr)
	d.MemoryErr = int64(math.Sqrt(variance) + 0.5)
	d.ByMemory = slices.Clone(a.byMemory)
	d.ByElements = slices.Clone(a.byElements)
	d.ByLength = slices.Clone(a.byLength)
	d.MemoryEstimated = a.memEst
}
