package stats

import (
	"math"
	"testing"
)

// estimate: a family read whole is exact; one key read gives no spread
// (its margin is the estimate); otherwise the mean times the count with
// the 95% margin of a sample drawn without replacement.
func TestEstimate(t *testing.T) {
	// 100 keys of 10 bytes and 100 of 30: mean 20, sd 10.05 (n-1).
	var sum, sq, cu float64
	for i := range 200 {
		v := 10.0
		if i%2 == 1 {
			v = 30
		}
		sum, sq, cu = sum+v, sq+v*v, cu+v*v*v
	}
	sd := math.Sqrt((sq - 200*20*20) / 199)
	tests := []struct {
		name            string
		n, count        int64
		sum, sq, cu     float64
		total, margin   int64
		marginTolerance int64
	}{
		{name: "nothing read", n: 0, count: 50},
		{name: "no keys", n: 5, count: 0, sum: 50, sq: 500},
		{name: "read whole", n: 200, count: 200, sum: sum, sq: sq, cu: cu, total: 4000},
		{name: "one key", n: 1, count: 1000, sum: 40, sq: 1600, cu: 64000, total: 40000, margin: 40000},
		{name: "all equal", n: 10, count: 1000, sum: 100, sq: 1000, cu: 10000, total: 10000},
		{name: "sample of 200 in 10,000", n: 200, count: 10000, sum: sum, sq: sq, cu: cu, total: 200000,
			margin: int64(z95*10000*sd/math.Sqrt(200)*math.Sqrt(1-200.0/10000) + 0.5), marginTolerance: 1},
		{name: "sample of 200 in 201", n: 200, count: 201, sum: sum, sq: sq, cu: cu, total: 4020,
			margin: int64(z95*201*sd/math.Sqrt(200)*math.Sqrt(1-200.0/201) + 0.5), marginTolerance: 1},
	}
	// Skewed: 290 keys of 10 bytes and 10 of 1,000 (skewness 5.2): 300 keys
	// are fewer than Cochran's 25·g1² (about 680), so the margin widens.
	var ss, sq2, cu2 float64
	for i := range 300 {
		v := 10.0
		if i < 10 {
			v = 1000
		}
		ss, sq2, cu2 = ss+v, sq2+v*v, cu2+v*v*v
	}
	m := ss / 300
	plain := int64(z95 * 100000 * math.Sqrt((sq2-300*m*m)/299/300*(1-300.0/100000)))
	_, wide := estimate(300, 100000, ss, sq2, cu2)
	if wide <= plain*3/2 {
		t.Errorf("a skewed sample's margin %d is not widened from %d", wide, plain)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			total, margin := estimate(tt.n, tt.count, tt.sum, tt.sq, tt.cu)
			if total != tt.total || margin < tt.margin-tt.marginTolerance || margin > tt.margin+tt.marginTolerance {
				t.Fatalf("estimate = %d ± %d, want %d ± %d", total, margin, tt.total, tt.margin)
			}
		})
	}
}

// figures scales a family's sums: exact TTL faults where every TTL was
// read, type faults from the sample scaled to the count.
func TestFamilyFigures(t *testing.T) {
	fs := FamilyStats{Count: 1000, Sampled: 100, TTLRead: 1000,
		Sums: SampleSums{MemN: 100, MemSum: 5000, MemSq: 250000, TypeBad: 2, TTLBad: 7, TTL: TTLHistogram{0, 0, 0, 1000}}}
	f := fs.figures(1)
	if f.Memory != 50000 || f.MemoryErr != 0 || f.Violations != 27 || !f.ViolationsEstimated || f.TTL[3] != 1000 {
		t.Fatalf("%+v", f)
	}
	fs.TTLRead, fs.Sums.TTL = 100, TTLHistogram{50, 0, 0, 50}
	if f := fs.figures(1); f.TTL[0] != 500 || f.TTL[3] != 500 || f.Violations != 90 {
		t.Fatalf("TTL from the sample, scaled: %+v", f)
	}
	whole := FamilyStats{Count: 10, Sampled: 10, TTLRead: 10, Sums: SampleSums{MemN: 10, MemSum: 123, MemSq: 2000, TTLBad: 1}}
	if f := whole.figures(1); f.Memory != 123 || f.MemoryErr != 0 || f.Violations != 1 || f.ViolationsEstimated || f.MemoryEstimatedKeys != 0 {
		t.Fatalf("a family read whole: %+v", f)
	}
	// A big set read whole: its memory is Redis's extrapolation, and says so.
	whole.Sums.MemEst = 1
	if f := whole.figures(1); f.MemoryEstimatedKeys != 1 {
		t.Fatalf("a family with an extrapolated key: %+v", f)
	}
}
