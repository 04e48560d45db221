package stats

import (
	"math"
	"time"

	"github.com/keydeck/keydeck/redisview/schema"
)

// A pass's sample: which keys it reads whole, and the figures and margins
// computed from them (issue 24).

// SampleSums are what a pass adds up per family (or for the unmatched keys):
// the figures and their errors are computed from them.
type SampleSums struct {
	MemN    int64   // sampled keys whose memory is known
	MemSum  float64 // their memory in bytes
	MemSq   float64 // and the sum of its squares
	MemCu   float64 // and of its cubes
	MemEst  int64   // keys whose memory is an extrapolation
	TypeBad int64   // sampled keys of another type than the family's
	TTLBad  int64   // TTL-read keys that break the family's TTL rule
	TTL     TTLHistogram
}

// DefaultSampleSize is how many keys of each family a pass reads whole
// when the budget does not say: enough for a memory estimate within a few
// per cent at 95% for the families of the seeds (make bench-sweep).
const DefaultSampleSize = 2000

func newAccumulator(now time.Time, sample int) *dbAccumulator {
	if sample <= 0 {
		sample = DefaultSampleSize
	}
	return &dbAccumulator{fams: map[*schema.Family]*FamilyStats{}, unmatched: map[string]*PrefixGroup{}, started: now, sample: sample}
}

// plan says how much of each key of a SCAN page the pass reads: whole
// while its family (or the unmatched keys) has fewer than sample keys read
// whole; else its TTL when its family has a TTL rule; else only its name.
// SCAN returns keys in the order of their hash, which has nothing to do
// with their values, so a family's first keys are a uniform sample of it.
func (a *dbAccumulator) plan(db int, keys []string, cls *schema.Classifier) []readLevel {
	levels := make([]readLevel, len(keys))
	var inBatch map[*schema.Family]int64
	var unmBatch int64
	for i, k := range keys {
		levels[i] = readName
		var fam *schema.Family
		if cls != nil {
			fam, _ = cls.Classify(db, k)
		}
		if fam == nil {
			if a.unmSampled+unmBatch < int64(a.sample) {
				levels[i] = readWhole
				unmBatch++
			}
			continue
		}
		var done int64
		if fs := a.fams[fam]; fs != nil {
			done = fs.Sampled
		}
		switch {
		case done+inBatch[fam] < int64(a.sample):
			levels[i] = readWhole
			if inBatch == nil {
				inBatch = map[*schema.Family]int64{}
			}
			inBatch[fam]++
		case fam.TTL.Kind != schema.TTLAny:
			levels[i] = readTTL
		}
	}
	return levels
}

// addMemory adds one key read whole to the memory sums (-1: not known).
func (s *SampleSums) addMemory(m int64) {
	if m < 0 {
		return
	}
	s.MemN++
	s.MemSum += float64(m)
	s.MemSq += float64(m) * float64(m)
	s.MemCu += float64(m) * float64(m) * float64(m)
}

// z95 is the normal quantile of a two-sided 95% interval.
const z95 = 1.959964

// estimate is the total of a figure over count keys from a sample of n of
// them (sum, sum of squares and of cubes), and the 95% margin of that
// total: the sample's mean times count, with the standard error of a simple
// random sample without replacement (the finite-population correction makes
// a family read whole exact). With one key read the margin is the estimate
// itself: one key says nothing of the spread.
//
// The normal approximation behind the margin needs a sample large for the
// skew of what it measures (Cochran's rule: n > 25·g1², g1 the skewness):
// a family of small values with a few ten times larger ones is covered far
// less often than 95% by a sample of a few hundred (a test found misses of
// three margins). Where the sample's own skewness says n is too small, the
// margin is widened by √(25·g1²/n).
func estimate(n, count int64, sum, sq, cu float64) (total, margin int64) {
	if n <= 0 || count <= 0 {
		return 0, 0
	}
	if n >= count {
		return int64(sum*float64(count)/float64(n) + 0.5), 0
	}
	fn := float64(n)
	mean := sum / fn
	t := mean * float64(count)
	if n == 1 {
		return int64(t + 0.5), int64(t + 0.5)
	}
	v := (sq - fn*mean*mean) / (fn - 1)
	if v < 0 {
		v = 0
	}
	se := float64(count) * math.Sqrt(v/fn*(1-fn/float64(count)))
	if m2 := sq/fn - mean*mean; m2 > 0 {
		m3 := cu/fn - 3*mean*sq/fn + 2*mean*mean*mean
		g1 := m3 / math.Pow(m2, 1.5)
		if need := 25 * g1 * g1; need > fn {
			se *= math.Sqrt(need / fn)
		}
	}
	return int64(t + 0.5), int64(z95*se + 0.5)
}

// figures turns a family's pass into the figures shown, its Count scaled
// by scale (a partial first pass).
func (fs *FamilyStats) figures(scale float64) FamilyStats {
	f := *fs
	sc := func(n int64) int64 { return int64(float64(n)*scale + 0.5) }
	f.Count = sc(fs.Count)
	f.Memory, f.MemoryErr = estimate(fs.Sums.MemN, f.Count, fs.Sums.MemSum, fs.Sums.MemSq, fs.Sums.MemCu)
	f.MemoryEstimatedKeys = fs.Sums.MemEst
	ratio := func(part, of int64) float64 {
		if of <= 0 {
			return 0
		}
		return float64(f.Count) / float64(of) * float64(part)
	}
	f.TTL = TTLHistogram{}
	for i, n := range fs.Sums.TTL {
		f.TTL[i] = int64(ratio(n, fs.TTLRead) + 0.5)
	}
	f.Violations = int64(ratio(fs.Sums.TypeBad, fs.Sampled) + ratio(fs.Sums.TTLBad, fs.TTLRead) + 0.5)
	f.ViolationsEstimated = fs.Sampled < fs.Count || scale != 1
	return f
}
