package stats

import "time"

// The overview's last hour: the samples its reads already take, averaged
// into fixed bins so an hour at a one-second poll stays 360 points. It
// costs no Redis command of its own.
const (
	TrendSpan = time.Hour
	TrendStep = 10 * time.Second
)

// TrendSample is one bin of the overview's hour: the mean rate and the
// last memory figure of the reads within it, and the keys of every
// database (from the same reads' INFO keyspace or DBSIZE).
type TrendSample struct {
	At         time.Time // the bin's last read
	OpsPerSec  float64
	UsedMemory int64
	HasOps     bool
	HasMemory  bool
	// Keys is each database's key count at the bin's last read; nil
	// when that read had none.
	Keys map[int]int64
}

type trendBin struct {
	TrendSample
	opsSum float64
	opsN   int
}

// trend keeps the bins of the last TrendSpan, oldest first.
type trend struct{ bins []trendBin }

// add folds one read into its bin and forgets bins older than the span.
func (t *trend) add(s Sample, dbs []DBStats) {
	start := s.At.Truncate(TrendStep)
	if n := len(t.bins); n == 0 || !t.bins[n-1].At.Truncate(TrendStep).Equal(start) {
		t.bins = append(t.bins, trendBin{})
	}
	b := &t.bins[len(t.bins)-1]
	b.At = s.At
	if s.HasOps {
		b.opsSum += s.OpsPerSec
		b.opsN++
		b.OpsPerSec, b.HasOps = b.opsSum/float64(b.opsN), true
	}
	if s.HasMemory {
		b.UsedMemory, b.HasMemory = s.UsedMemory, true
	}
	if len(dbs) > 0 {
		b.Keys = make(map[int]int64, len(dbs))
		for _, d := range dbs {
			b.Keys[d.Index] = d.Keys
		}
	}
	cut := 0
	for cut < len(t.bins) && s.At.Sub(t.bins[cut].At) > TrendSpan {
		cut++
	}
	if cut > 0 {
		t.bins = append(t.bins[:0], t.bins[cut:]...)
	}
}

// samples copies the bins out.
func (t *trend) samples() []TrendSample {
	out := make([]TrendSample, len(t.bins))
	for i, b := range t.bins {
		out[i] = b.TrendSample
	}
	return out
}
