package stats

import (
	"context"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/redistest"
)

func TestTrendBinsAnHour(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 15, 0, 0, 0, time.UTC)
	var tr trend
	// Three reads in one bin: the rate is their mean, memory the last.
	tr.add(Sample{At: t0, OpsPerSec: 10, HasOps: true, UsedMemory: 100, HasMemory: true}, []DBStats{{Index: 0, Keys: 5}})
	tr.add(Sample{At: t0.Add(3 * time.Second), OpsPerSec: 20, HasOps: true, UsedMemory: 300, HasMemory: true}, nil)
	tr.add(Sample{At: t0.Add(9 * time.Second), OpsPerSec: 60, HasOps: true}, []DBStats{{Index: 2, Keys: 7}})
	got := tr.samples()
	if len(got) != 1 || got[0].OpsPerSec != 30 || got[0].UsedMemory != 300 || got[0].Keys[2] != 7 || len(got[0].Keys) != 1 {
		t.Fatalf("one bin: %+v", got)
	}
	if !got[0].At.Equal(t0.Add(9 * time.Second)) {
		t.Fatalf("bin at %v, want its last read", got[0].At)
	}
	// A read without a rate leaves the bin's rate as it was.
	tr.add(Sample{At: t0.Add(10 * time.Second), HasMemory: true, UsedMemory: 1}, nil)
	if got = tr.samples(); len(got) != 2 || got[1].HasOps {
		t.Fatalf("second bin: %+v", got)
	}
	// An hour of one-second reads keeps one bin per TrendStep, and
	// nothing older than the hour.
	for i := 1; i <= 2*3600; i++ {
		tr.add(Sample{At: t0.Add(time.Duration(i) * time.Second), OpsPerSec: 1, HasOps: true}, nil)
	}
	got = tr.samples()
	if want := int(TrendSpan/TrendStep) + 1; len(got) > want || len(got) < want-1 {
		t.Fatalf("%d bins after two hours, want about %d", len(got), want)
	}
	last := got[len(got)-1].At
	if span := last.Sub(got[0].At); span > TrendSpan {
		t.Fatalf("kept %v", span)
	}
}

// The hour costs no Redis command: each read still sends INFO and CONFIG
// GET, and nothing else, while the trend grows.
func TestTrendSendsNoCommand(t *testing.T) {
	ctx := context.Background()
	s := redistest.Start(t)
	s.Client(3).Set(ctx, "k", "v", 0)
	r := NewOverviewReader(openConn(t, s.URL(0)))
	r.Read(ctx) // connects, detects
	before, err := s.CommandCalls(ctx)
	if err != nil {
		t.Fatal(err)
	}
	clock := time.Now()
	r.now = func() time.Time { return clock }
	const reads = 4
	var ov Overview
	for range reads {
		clock = clock.Add(TrendStep)
		ov = r.Read(ctx)
	}
	after, err := s.CommandCalls(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sent := map[string]int64{}
	for cmd, n := range after {
		if d := n - before[cmd]; d > 0 {
			sent[cmd] = d
		}
	}
	// The INFO commandstats that read "before" (+1), and the HELLO of
	// the connection that read "after", are the test's own.
	delete(sent, "hello")
	if len(sent) != 2 || sent["info"] != reads+1 || sent["config|get"]+sent["config"] != reads {
		t.Fatalf("commands of %d reads: %v", reads, sent)
	}
	if len(ov.Trend) < reads || ov.Trend[len(ov.Trend)-1].Keys[3] != 1 || !ov.Trend[len(ov.Trend)-1].HasMemory {
		t.Fatalf("trend = %+v", ov.Trend)
	}
}
