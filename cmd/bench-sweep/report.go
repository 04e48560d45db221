package main

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/keydeck/keydeck/redisview/stats"
)

// figure is one family's (or the unmatched keys') figures against the truth.
type figure struct {
	id                  string
	truth               truth
	count, mem, memErr  int64
	sampled, ttlRead    int64
	violations          int64
	violationsEstimated bool
}

// exactMem: every key was read whole, so the memory is not a sample's
// estimate (a sample whose keys all have the same size has a margin of 0,
// and is still an estimate).
func (f figure) exactMem() bool { return f.sampled >= f.count }

// within: the truth lies within the stated margin (an exact figure must
// equal the truth).
func (f figure) within() bool { return abs(f.mem-f.truth.memory) <= f.memErr }

func abs(x int64) int64 { return max(x, -x) }

func figures(r passResult) []figure {
	var out []figure
	for i, fam := range families {
		f := figure{id: fam.id, truth: r.truth[i]}
		if fam.id == "" {
			f.id = "(no family)"
			f.count, f.mem, f.memErr, f.sampled = r.detail.UnmCount, r.detail.UnmMemory, r.detail.UnmMemoryErr, r.detail.UnmSampled
			f.violations = -1
		} else {
			for _, fs := range r.detail.Families {
				if fs.Family.ID == fam.id {
					f.count, f.mem, f.memErr, f.sampled, f.ttlRead = fs.Count, fs.Memory, fs.MemoryErr, fs.Sampled, fs.TTLRead
					f.violations, f.violationsEstimated = fs.Violations, fs.ViolationsEstimated
				}
			}
		}
		out = append(out, f)
	}
	slices.SortStableFunc(out, func(a, b figure) int { return cmp.Compare(b.truth.count, a.truth.count) })
	return out
}

func pct(x float64) string { return fmt.Sprintf("%.2f%%", x) }

func yes(ok bool) string {
	if ok {
		return "yes"
	}
	return "**no**"
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

func report(w io.Writer, o options, r passResult) {
	d := r.detail
	where := "one redis-server"
	if o.cluster {
		where = fmt.Sprintf("a cluster of %d primaries", len(r.nodeKeys))
	}
	fmt.Fprintf(w, "\n## Statistics sweep of %d keys on %s (%s)\n\n", r.keys, where, time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	fmt.Fprintf(w, "Loaded in %s (%.0f keys/s); the exact memory of every key read in %s. Budget: `%+v`; SampleSize %d.\n\n",
		r.load.Round(time.Second), float64(r.keys)/r.load.Seconds(), r.truthTime.Round(time.Second), stats.DefaultSweepBudget, d.SampleSize)

	var idle, busy float64
	for i := range r.idle {
		idle += r.idle[i]
		busy += r.busy[i]
	}
	sweepCPU := busy - idle
	var calls int64
	byCmd := map[string]int64{}
	for _, m := range r.calls {
		for cmd, v := range m {
			calls += v
			byCmd[cmd] += v
		}
	}
	// Commands per key read: all keys after a complete pass, else those
	// the pass read.
	read := r.keys
	if !r.complete {
		read = max(d.Seen, 1)
	}
	perKey := float64(calls) / float64(read)
	var cmdParts []string
	var other int64
	for cmd, v := range byCmd {
		switch {
		case float64(v)/float64(read) >= 0.0005:
			cmdParts = append(cmdParts, fmt.Sprintf("%s %.3f", strings.ToUpper(cmd), float64(v)/float64(read)))
		case v > 0:
			other += v
		}
	}
	slices.Sort(cmdParts)
	if other > 0 {
		cmdParts = append(cmdParts, fmt.Sprintf("%d other commands", other))
	}
	var slowest time.Duration
	slowCmd, over, logged, noise := "", 0, 0, time.Duration(0)
	for _, s := range r.slow {
		logged += s.Logged
		over += s.Over2ms
		noise = max(noise, s.NoiseFloor)
		if s.Slowest > slowest {
			slowest, slowCmd = s.Slowest, s.Cmd
		}
	}
	figs := figures(r)
	countsExact, estimated, estWithin, exactClaimed, exactEqual, violExact, violChecked := 0, 0, 0, 0, 0, 0, 0
	for _, f := range figs {
		if f.count == f.truth.count {
			countsExact++
		}
		if f.exactMem() {
			exactClaimed++
			if f.within() {
				exactEqual++
			}
		} else {
			estimated++
			if f.within() {
				estWithin++
			}
		}
		// Every key's TTL read: the violations (TTL ones only, by
		// construction) must be exact.
		if f.violations >= 0 && f.ttlRead >= f.count {
			violChecked++
			if f.violations == f.truth.violations {
				violExact++
			}
		}
	}

	fmt.Fprintln(w, "| measure | result | target | met |")
	fmt.Fprintln(w, "|---|---|---|---|")
	pass := fmt.Sprintf("%s (first figures after %s)", r.elapsed.Round(time.Second), r.first.Round(time.Millisecond))
	if !r.complete {
		left := float64(r.keys-d.Seen) / (float64(d.Seen) / r.elapsed.Seconds())
		pass = fmt.Sprintf("not complete after %s: %d of %d keys read; at that rate about %s", r.elapsed.Round(time.Second), d.Seen, r.keys,
			(r.elapsed + time.Duration(left*float64(time.Second))).Round(time.Second))
	}
	fmt.Fprintf(w, "| complete pass | %s | ≤ 30 min at 10M keys | %s |\n", pass, metPass(r))
	if r.keys < 10_000_000 && r.complete {
		fmt.Fprintf(w, "| … scaled to 10M keys (linear) | %s | ≤ 30 min | %s |\n", scaled(r).Round(time.Second), yes(scaled(r) <= 30*time.Minute))
	}
	fmt.Fprintf(w, "| Redis CPU while the pass ran, less idle | %s of a core (%s during the pass, %s idle, summed over nodes) | ≤ 1%% | %s |\n",
		pct(sweepCPU), pct(busy), pct(idle), yes(sweepCPU <= 1))
	model := "not given (0)"
	if d.CPU > 0 {
		model = fmt.Sprintf("%s (measured/model %.2f)", pct(d.CPU*100), sweepCPU/(d.CPU*100))
	}
	fmt.Fprintf(w, "| the sweep's own CPU estimate (DBDetail.CPU) | %s | near the measured | — |\n", model)
	fl := r.floor
	fmt.Fprintf(w, "| the floor on this data, this sitting (no Keydeck: SCAN COUNT %d as fast as it goes) | SCAN %.2f µs of Redis CPU per key, SCAN + pipelined PTTL %.2f µs: at 1%% of a core a 10M pass that reads every TTL takes at least %s, one that only counts %s | — | — |\n",
		max(stats.DefaultSweepBudget.Count, 10), fl.scan, fl.scanTTL, floorTime(fl.scanTTL), floorTime(fl.scan))
	fmt.Fprintf(w, "| the sweep's Redis CPU per key | %.2f µs (its CPU over the pass / keys) | — | — |\n", sweepCPU/100*r.elapsed.Seconds()/float64(read)*1e6)
	fmt.Fprintf(w, "| commands per key read | %.3f (%s) | — | — |\n", perKey, strings.Join(cmdParts, ", "))
	fmt.Fprintf(w, "| keys read whole / TTL only / SCAN only | %d / %d / %d | — | — |\n", d.ReadWhole, d.TTLOnly, r.keys-d.ReadWhole-d.TTLOnly)
	sl := "none logged"
	if slowest > 0 {
		sl = fmt.Sprintf("%s %s; %d logged over %d µs, %d over 2 ms; slowest O(1) command %s (the scheduler's noise)", slowest.Round(time.Microsecond), slowCmd, logged, o.slowlog, over, noise.Round(time.Microsecond))
	}
	fmt.Fprintf(w, "| slowest command (SLOWLOG) | %s | none over 2 ms | %s |\n", sl, yes(over == 0))
	fmt.Fprintf(w, "| counts exact | %d of %d (families and the unmatched keys) | all | %s |\n", countsExact, len(figs), yes(countsExact == len(figs)))
	share := 0.0
	if estimated > 0 {
		share = float64(estWithin) / float64(estimated) * 100
	}
	fmt.Fprintf(w, "| estimated memory within its stated 95%% margin | %d of %d (%.0f%%) | ≥ 95%% | %s |\n", estWithin, estimated, share, yes(estimated > 0 && share >= 95))
	fmt.Fprintf(w, "| memory stated exact and equal to the truth | %d of %d | all | %s |\n", exactEqual, exactClaimed, yes(exactEqual == exactClaimed))
	fmt.Fprintf(w, "| TTL violations exact (every key's TTL read) | %d of %d | all | %s |\n", violExact, violChecked, yes(violExact == violChecked))
	if !r.complete {
		fmt.Fprintf(w, "| the pass | incomplete: the figures below are scaled from %d keys read (%.1f%%) | complete | **no** |\n", d.Seen, d.Coverage*100)
	}
	if d.Err != "" {
		fmt.Fprintf(w, "| sweep error | %s | none | **no** |\n", d.Err)
	}
	if r.expired != 0 {
		fmt.Fprintf(w, "| keys gone during the run | %d (the counts' truth moved) | 0 | **no** |\n", r.expired)
	}

	fmt.Fprintln(w, "\n| family | keys | counted | read whole | TTL read | memory (exact) | estimate ± 95% margin | error | error / margin | within | violations (truth) | violations |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, f := range figs {
		rel := 0.0
		if f.truth.memory > 0 {
			rel = float64(f.mem-f.truth.memory) / float64(f.truth.memory) * 100
		}
		ratio, margin := "—", "exact"
		if !f.exactMem() {
			margin = "± 0 (every sampled key the same size)"
		}
		if f.memErr > 0 {
			ratio = fmt.Sprintf("%.2f", math.Abs(float64(f.mem-f.truth.memory))/float64(f.memErr))
			margin = fmt.Sprintf("± %s (%.2f%%)", mib(f.memErr), float64(f.memErr)/float64(max(f.mem, 1))*100)
		}
		counted := fmt.Sprint(f.count)
		if f.count != f.truth.count {
			counted = fmt.Sprintf("**%d**", f.count)
		}
		viol, violTruth := "—", "—"
		if f.violations >= 0 {
			violTruth = fmt.Sprint(f.truth.violations)
			viol = fmt.Sprint(f.violations)
			if f.violationsEstimated {
				viol += " (est.)"
			}
		}
		fmt.Fprintf(w, "| %s | %d | %s | %d | %d | %s | %s %s | %+.2f%% | %s | %s | %s | %s |\n",
			f.id, f.truth.count, counted, f.sampled, f.ttlRead, mib(f.truth.memory), mib(f.mem), margin, rel, ratio, yes(f.within()), violTruth, viol)
	}

	{
		fmt.Fprintln(w, "\n| node | keys | Redis CPU during the pass | idle | sweep (less idle) | commands per key | slowest (SLOWLOG) |")
		fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
		for i := range r.nodeKeys {
			var c int64
			for _, v := range r.calls[i] {
				c += v
			}
			s := r.slow[i]
			sl := "none logged"
			if s.Slowest > 0 {
				sl = fmt.Sprintf("%s %s (%d over 2 ms)", s.Slowest.Round(time.Microsecond), s.Cmd, s.Over2ms)
			}
			fmt.Fprintf(w, "| %d | %d | %s | %s | %s | %.3f | %s |\n", i, r.nodeKeys[i], pct(r.busy[i]), pct(r.idle[i]), pct(r.busy[i]-r.idle[i]), float64(c)/float64(max(r.nodeKeys[i]*read/r.keys, 1)), sl)
		}
	}
	fmt.Fprintln(w)
	for i, l := range r.latency {
		fmt.Fprintf(w, "Node %d latency (INFO latencystats since the idle baseline): %s\n\n", i, l)
	}
}

// floorTime is how long 10M keys at us µs each take at 1% of a core.
func floorTime(us float64) time.Duration {
	return time.Duration(us * 10_000_000 / 0.01 * float64(time.Microsecond)).Round(time.Second)
}

// scaled is the pass's time at 10M keys, the rate kept.
func scaled(r passResult) time.Duration {
	return time.Duration(float64(r.elapsed) * 10_000_000 / float64(r.keys))
}

func metPass(r passResult) string {
	if !r.complete {
		return "**no**"
	}
	if r.keys < 10_000_000 {
		return "see below"
	}
	return yes(r.elapsed <= 30*time.Minute)
}
