package stats_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/redisview/stats"
)

// samplePack is twenty string families f00…f19 in db 0: every third has a
// TTL rule ("required", max 1h), every third must be persistent, the rest
// have none.
func samplePack(t *testing.T) *schema.Pack {
	t.Helper()
	var b strings.Builder
	b.WriteString("name: sample\ntitle: Sample\nfamilies:\n")
	for i := range 20 {
		ttl := []string{"{max: 1h}", "none", "any"}[i%3]
		fmt.Fprintf(&b, "  - id: f%02d\n    db: 0\n    pattern: \"f%02d:{id}\"\n    type: string\n    ttl: %s\n    domain: D%d\n    role: cache\n    description: family %d\n", i, i, ttl, i%4, i)
	}
	p, err := schema.Load("sample.yaml", []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// sampleFamily is what the test wrote of one family.
type sampleFamily struct {
	keys    int64
	memory  int64 // MEMORY USAGE SAMPLES 0 of every key, summed
	ttlBad  int64 // keys breaking the TTL rule
	typeBad int64 // keys of another type
}

// loadSampleData writes the families: 3,000 keys each (f19: 150, read
// whole), values of a length spread differently per family, TTLs as the
// rule wants but for a few planted faults, 30 hashes in f01 (wrong type),
// and 40 keys no family matches. It returns the truth per family.
func loadSampleData(t *testing.T, c *redis.Client) map[string]*sampleFamily {
	t.Helper()
	ctx := context.Background()
	r := rand.New(rand.NewPCG(7, 24))
	truth := map[string]*sampleFamily{}
	p := c.Pipeline()
	flush := func() {
		if _, err := p.Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 20 {
		id := fmt.Sprintf("f%02d", i)
		f := &sampleFamily{}
		truth[id] = f
		n := 3000
		if i == 19 {
			n = 150
		}
		for j := range n {
			key := fmt.Sprintf("%s:%d", id, j)
			f.keys++
			if i == 1 && j < 30 {
				p.HSet(ctx, key, "a", "b")
				f.typeBad++
				continue
			}
			// Lengths: uniform up to a family's own bound, some families
			// with a long tail (one value in 50 ten times longer).
			l := 1 + r.IntN(40*(i+1))
			if i%4 == 3 && r.IntN(50) == 0 {
				l *= 10
			}
			var ttl time.Duration
			switch i % 3 {
			case 0: // required
				ttl = time.Duration(10+r.IntN(3000)) * time.Second
				if j%500 == 7 {
					ttl, f.ttlBad = 0, f.ttlBad+1
				}
			case 1: // none
				if j%700 == 3 {
					ttl, f.ttlBad = time.Hour, f.ttlBad+1
				}
			case 2:
				if r.IntN(2) == 0 {
					ttl = time.Hour
				}
			}
			p.Set(ctx, key, strings.Repeat("v", l), ttl)
			if j%1000 == 999 {
				flush()
			}
		}
		flush()
	}
	for j := range 40 {
		p.Set(ctx, fmt.Sprintf("other:%d", j), strings.Repeat("o", j+1), 0)
	}
	flush()
	// The exact memory of every key, read after writing.
	for id, f := range truth {
		var cmds []*redis.IntCmd
		for j := range f.keys {
			cmds = append(cmds, p.MemoryUsage(ctx, fmt.Sprintf("%s:%d", id, j), 0))
		}
		flush()
		for _, cmd := range cmds {
			f.memory += cmd.Val()
		}
	}
	return truth
}

// A pass counts every key from its name — each family's count is exact, and
// with the unmatched keys adds up to DBSIZE — reads every key's TTL where
// the family has a TTL rule (the TTL faults are exact) and the first 300 of
// each family whole. The memory of a family is then an estimate whose
// stated 95% margin holds the exact figure (MEMORY USAGE of every key) in
// at least 16 of the 20 families (a 95% interval misses one in twenty; 5
// misses or more has a chance of 0.3%), and no family is off by more than
// twice its margin. A family of 150 keys is read whole: exact, no margin.
// Only the sample gets MEMORY USAGE and TYPE; KEYS is never sent.
func TestSampledPassExactCountsAndStatedError(t *testing.T) {
	ctx := context.Background()
	rs := redistest.Start(t)
	admin := rs.Client(0)
	truth := loadSampleData(t, rs.Client(0))
	admin.ConfigResetStat(ctx)
	c := openConn(t, rs.URL(0))
	c.ForcePack(samplePack(t))
	d, err := stats.SweepPassSample(ctx, c, 0, 300)
	if err != nil {
		t.Fatal(err)
	}
	calls := commandCalls(t, admin)
	dbsize := admin.DBSize(ctx).Val()
	var counted int64 = d.UnmCount
	within, famMem := 0, int64(0)
	for _, f := range d.Families {
		want := truth[f.Family.ID]
		counted += f.Count
		famMem += f.Memory
		if f.Count != want.keys {
			t.Errorf("%s: %d keys counted, %d written", f.Family.ID, f.Count, want.keys)
		}
		if f.Family.ID == "f19" {
			if f.Sampled != f.Count || f.MemoryErr != 0 || f.Memory != want.memory || f.ViolationsEstimated {
				t.Errorf("f19 (150 keys) is not read whole and exact: %+v; memory %d", f, want.memory)
			}
			continue
		}
		if f.Sampled != 300 {
			t.Errorf("%s: %d keys read whole, want the sample of 300", f.Family.ID, f.Sampled)
		}
		wantTTL := f.Sampled
		if f.Family.TTL.Kind != schema.TTLAny {
			wantTTL = f.Count
		}
		if f.TTLRead != wantTTL {
			t.Errorf("%s: TTL read of %d keys, want %d", f.Family.ID, f.TTLRead, wantTTL)
		}
		if f.Family.TTL.Kind != schema.TTLAny && want.typeBad == 0 && f.Violations != want.ttlBad {
			t.Errorf("%s: %d violations, %d TTL faults planted (every TTL is read: exact)", f.Family.ID, f.Violations, want.ttlBad)
		}
		if !f.ViolationsEstimated {
			t.Errorf("%s: violations not labelled estimated although the type is checked on a sample", f.Family.ID)
		}
		off := f.Memory - want.memory
		if off < 0 {
			off = -off
		}
		if f.MemoryErr <= 0 {
			t.Errorf("%s: a sampled memory figure without a margin: %+v", f.Family.ID, f)
		}
		if off <= f.MemoryErr {
			within++
		}
		if off > 2*f.MemoryErr {
			t.Errorf("%s: memory %d ± %d, exactly %d: off by more than twice the margin", f.Family.ID, f.Memory, f.MemoryErr, want.memory)
		}
		t.Logf("%s: memory %d ± %d (%.1f%%), exact %d, off %.2f margins", f.Family.ID, f.Memory, f.MemoryErr,
			100*float64(f.MemoryErr)/float64(f.Memory), want.memory, float64(off)/float64(f.MemoryErr))
	}
	if counted != dbsize || d.UnmCount != 40 {
		t.Errorf("counted %d keys (%d unmatched); DBSIZE %d", counted, d.UnmCount, dbsize)
	}
	if within < 15 { // 19 sampled families
		t.Errorf("the exact memory lies within the stated margin in %d of 19 families", within)
	}
	if f1 := family(d, "f01"); f1.Violations < 1 || f1.Violations > 3000 {
		t.Errorf("f01's 30 hashes among 3,000: %d violations estimated", f1.Violations)
	}
	if d.MemoryErr <= 0 || d.Memory != famMem+d.UnmMemory {
		t.Errorf("database memory %d ± %d; families %d + unmatched %d", d.Memory, d.MemoryErr, famMem, d.UnmMemory)
	}
	whole := int64(19*300 + 150 + 40)
	if d.ReadWhole != whole || calls["memory|usage"] > whole || calls["type"] > whole {
		t.Errorf("read whole %d (want %d); MEMORY USAGE %d, TYPE %d", d.ReadWhole, whole, calls["memory|usage"], calls["type"])
	}
	if calls["keys"] != 0 {
		t.Error("KEYS was sent")
	}
	t.Logf("commands: %v", calls)
}

// The sweeper states what its pass costs Redis, and a budget of a share of
// a core slows it: at 0.5% of a core 2,000 keys of SCAN and PTTL (about
// 10 ms of Redis CPU by the model) take at least 2 s.
func TestSweeperStatesAndKeepsItsCPUBudget(t *testing.T) {
	ctx := context.Background()
	rs := redistest.Start(t)
	data := rs.Client(0)
	p := data.Pipeline()
	for j := range 2000 {
		p.Set(ctx, fmt.Sprintf("f00:%d", j), "v", time.Hour)
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	c := openConn(t, rs.URL(0))
	c.ForcePack(samplePack(t))
	start := time.Now()
	d := sweepOnceWith(t, c, 0, stats.SweepBudget{KeysPerSec: 1000000, Count: 100, CPU: 0.005, Sample: 10})
	took := time.Since(start)
	if d.CPU <= 0 || d.CPU > 0.006 { // the wait after the last step is not in the pass
		t.Errorf("the pass states %.4f of a core; its budget is 0.005", d.CPU)
	}
	if took < 1800*time.Millisecond {
		t.Errorf("a pass of 2,000 keys at 0.5%% of a core took %v", took)
	}
	if f := family(d, "f00"); f.Count != 2000 || f.Sampled != 10 || f.TTLRead != 2000 || d.TTLOnly != 1990 {
		t.Errorf("f00: %+v; TTL only %d", f, d.TTLOnly)
	}
}

// With keyspace events on (K, g, x, e and n), the counts of a completed
// pass are kept current from them — keys created and deleted show at once,
// no new pass reads the database while the kept total agrees with INFO —
// and a change without events (FLUSHDB) is found as drift, which starts a
// new pass.
func TestLiveCountsBetweenPasses(t *testing.T) {
	ctx := context.Background()
	rs := redistest.Start(t)
	data := rs.Client(0)
	if err := data.ConfigSet(ctx, "notify-keyspace-events", "Kgxen").Err(); err != nil {
		t.Fatal(err)
	}
	for j := range 50 {
		data.Set(ctx, fmt.Sprintf("f00:%d", j), "v", time.Hour)
	}
	c := openConn(t, rs.URL(0))
	c.ForcePack(samplePack(t))
	pctx, cancel := context.WithCancel(ctx)
	pool := stats.NewSweepers(pctx, stats.SweepBudget{KeysPerSec: 100000, Count: 100, CPU: 1, Sample: 10}, time.Minute, quiet())
	t.Cleanup(func() { cancel(); pool.Wait() })
	s, release := pool.Acquire(c, 0)
	defer release()
	var d stats.DBDetail
	redistest.Eventually(t, 20*time.Second, "a pass whose counts are live", func() bool {
		d = s.Detail(stats.TotalKeys(ctx, c, 0))
		return d.Pass >= 1 && d.CountsLive
	})
	if f := family(d, "f00"); f.Count != 50 {
		t.Fatalf("first pass: %+v", f)
	}
	passes := d.Pass
	for j := 50; j < 60; j++ {
		data.Set(ctx, fmt.Sprintf("f00:%d", j), "v", time.Hour)
	}
	data.Set(ctx, "f01:new", "v", 0)
	data.Del(ctx, "f00:0", "f00:1", "f00:2", "f00:3", "f00:4")
	redistest.Eventually(t, 10*time.Second, "counts kept from events", func() bool {
		d = s.Detail(stats.TotalKeys(ctx, c, 0))
		return family(d, "f00").Count == 55 && family(d, "f01").Count == 1
	})
	// For more than a pass interval no pass runs: no SCAN is sent.
	scans, since := commandCalls(t, rs.Client(0))["scan"], time.Now()
	redistest.Eventually(t, 10*time.Second, "3 s without a pass", func() bool {
		if n := commandCalls(t, rs.Client(0))["scan"]; n != scans {
			t.Fatalf("%d SCANs while the live counts agree with INFO", n-scans)
		}
		return time.Since(since) > 3*time.Second
	})
	if d = s.Detail(stats.TotalKeys(ctx, c, 0)); d.Pass != passes || !d.CountsLive || d.CountsSince.IsZero() {
		t.Fatalf("a pass ran although the live counts agree with INFO: pass %d (was %d), live %v %q", d.Pass, passes, d.CountsLive, d.CountsWhy)
	}
	data.FlushDB(ctx) // no per-key events: drift
	data.Set(ctx, "f00:x", "v", time.Hour)
	redistest.Eventually(t, 20*time.Second, "a new pass after drift", func() bool {
		d = s.Detail(stats.TotalKeys(ctx, c, 0))
		return d.Pass > passes && family(d, "f00").Count == 1
	})
}

// Without keyspace events the page says why the counts are the last
// pass's.
func TestCountsNotLiveSayWhy(t *testing.T) {
	rs := redistest.Start(t)
	rs.Client(0).Set(context.Background(), "f00:1", "v", time.Hour)
	c := openConn(t, rs.URL(0))
	c.ForcePack(samplePack(t))
	d := sweepOnceWith(t, c, 0, stats.SweepBudget{KeysPerSec: 100000, Count: 100, CPU: 1, Sample: 10})
	if d.CountsLive || d.CountsWhy == "" {
		t.Fatalf("live %v, why %q", d.CountsLive, d.CountsWhy)
	}
	t.Logf("why: %s", d.CountsWhy)
}

// A small database's pass is one step of a few milliseconds, followed by
// the wait its budget wants: the share stated is that of the step and its
// wait (it said 13% of a core on the demo's gateway database).
func TestOneStepPassStatesItsBudget(t *testing.T) {
	rs := redistest.Start(t)
	p := rs.Client(0).Pipeline()
	for j := range 200 {
		p.Set(context.Background(), fmt.Sprintf("f00:%d", j), "v", time.Hour)
	}
	if _, err := p.Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
	c := openConn(t, rs.URL(0))
	c.ForcePack(samplePack(t))
	d := sweepOnceWith(t, c, 0, stats.SweepBudget{KeysPerSec: 1000000, Count: 1000, CPU: 0.01, Sample: 2000})
	if d.CPU <= 0 || d.CPU > 0.0101 {
		t.Fatalf("a one-step pass at 1%% of a core states %.4f", d.CPU)
	}
}
