package handlers

import (
	"math"
	"strings"
	"time"

	"github.com/keydeck/keydeck/redisview/stats"
	"github.com/keydeck/keydeck/views"
	"github.com/keydeck/keydeck/views/format"
)

// How the database page says what each figure is: a sweep counts every key
// from its name (exact), reads whole only a sample of each family (memory,
// types, sizes: estimated, with their 95% margin), and reads every key's
// TTL where the family has a TTL rule.

// margin is a 95% half-width as a share of its figure: "± 2%", "± 0.4%",
// "± <0.1%".
func margin(err, of int64) string {
	if of <= 0 {
		return "± " + format.Bytes(err)
	}
	r := float64(err) / float64(of)
	switch {
	case r < 0.0005:
		return "± <0.1%"
	}
	return "± " + percent(r)
}

// percent is a share with one decimal below 9.5%, none above, and no
// trailing ".0": "0.8%", "2%", "12%".
func percent(r float64) string {
	if r < 0.095 {
		return strings.Replace(format.Percent(r, 1), ".0%", "%", 1)
	}
	return format.Percent(r, 0)
}

// memoryFigure is a memory total and what it is: exact when every key
// was read whole, else an estimate from sampled of keys with its margin.
// The note is short (a table's small line); the title says it in full.
func memoryFigure(mem, memErr, sampled, keys int64, why string) (value, note, title string) {
	switch {
	case why != "":
		return "n/a", "", "Memory per key is unavailable: " + why + "."
	case keys <= 0:
		return format.Bytes(mem), "", ""
	case sampled <= 0:
		return "—", "none read yet", "No key of these has been read whole yet: their memory is not known."
	case sampled >= keys:
		return format.Bytes(mem), "exact", "Exact: every one of the " + format.Plural(keys, "key", "keys") + " was read whole."
	}
	from := "from " + format.Count(sampled) + " of " + format.Count(keys) + " keys"
	return format.Bytes(mem) + " " + margin(memErr, mem), from,
		"Estimated " + from + " read whole: " + format.Bytes(max(0, mem-memErr)) + " to " + format.Bytes(mem+memErr) +
			" with 95% confidence."
}

// sumErr is the 95% margin of a sum of independent estimates.
func sumErr(errs ...int64) int64 {
	var sq float64
	for _, e := range errs {
		sq += float64(e) * float64(e)
	}
	return int64(math.Sqrt(sq) + 0.5)
}

// readWhole is how many keys of the pass shown were read whole, of how
// many the pass counted: the families' samples and the unmatched keys'.
func readWhole(d stats.DBDetail) (sampled, keys int64) {
	for _, f := range d.Families {
		sampled, keys = sampled+min(f.Sampled, f.Count), keys+f.Count
	}
	return sampled + min(d.UnmSampled, d.UnmCount), keys + d.UnmCount
}

// violationsEstimated: some family's count of violations is scaled from
// its sample (type violations), so the database's is too.
func violationsEstimated(d stats.DBDetail) bool {
	for _, f := range d.Families {
		if f.ViolationsEstimated && f.Violations > 0 {
			return true
		}
	}
	return false
}

// familyFigures says of a family row whether each figure is exact or
// estimated, and from how many keys.
func familyFigures(r *views.FamilyRow, f stats.FamilyStats, d stats.DBDetail) {
	if d.Estimated {
		r.Keys = "≈ " + r.Keys
		r.KeysNote, r.KeysTitle = "estimated", "Scaled from the share of the database the first pass has read."
	} else {
		r.KeysNote, r.KeysTitle = "exact", "Exact: every key counted from its name."
	}
	r.Memory, r.MemoryNote, r.MemoryTitle = memoryFigure(f.Memory, f.MemoryErr, f.Sampled, f.Count, d.MemoryWhy)
	if f.MemoryEstimatedKeys > 0 && r.MemoryNote == "exact" {
		r.Memory, r.MemoryNote = "≈ "+r.Memory, "Redis's estimate"
		r.MemoryTitle = "Every key was read whole, but the memory of " + format.Plural(f.MemoryEstimatedKeys, "big key is", "big keys is") +
			" extrapolated from a few of its elements (MEMORY USAGE … SAMPLES 5, or Keydeck's estimate of a big hash table)."
	}
	switch {
	case f.Count <= 0:
	case f.TTLRead >= f.Count:
		r.TTLNote = "every key's TTL"
	case f.TTLRead > 0:
		r.TTLNote = "from " + format.Count(f.TTLRead) + " keys"
		r.TTLScaled = true
	default:
		r.TTLNote = "no TTL read yet"
	}
	if f.ViolationsEstimated && f.Violations > 0 {
		r.Violations = "≈ " + r.Violations
		r.ViolNote = "estimated from a sample"
		r.ViolTitle = "Type violations found in the " + format.Plural(f.Sampled, "key", "keys") + " read whole, scaled to the family's " + format.Count(f.Count) +
			"; TTL violations are counted in " + ttlReadWords(f) + "."
	}
}

func ttlReadWords(f stats.FamilyStats) string {
	if f.TTLRead >= f.Count {
		return "every key"
	}
	return "the " + format.Plural(f.TTLRead, "key", "keys") + " whose TTL was read"
}

// dbFigures is the page's total memory, the method disclosure, the
// sweep's cost and how old the figures are.
func dbFigures(vm *views.DBPageVM, d stats.DBDetail, now time.Time) {
	sampled, keys := readWhole(d)
	if d.Memory > 0 || d.MemoryWhy != "" || keys > 0 {
		vm.Memory, vm.MemoryWhole, vm.MemoryTitle = memoryFigure(d.Memory, d.MemoryErr, sampled, keys, d.MemoryWhy)
		if vm.MemoryWhole != "" && vm.MemoryWhole != "exact" && vm.MemoryWhole != "none read yet" {
			vm.MemoryWhole = "95%, " + vm.MemoryWhole
		}
	}
	if sampled > 0 {
		vm.BigNote = "of the " + format.Plural(sampled, "key", "keys") + " read whole"
		if sampled < keys {
			vm.BigNote += " (not every key: a larger one may be among the others)"
		}
		vm.BigNote += "."
	}
	if d.CPU > 0 {
		vm.CPU = "This database's sweep costs Redis about " + cpuShare(d.CPU) + " of a core while it runs (estimated from its commands)."
	}
	vm.Age = figuresAge(d, now)
	vm.Method = method(d, sampled, keys)
}

// cpuShare is a share of a core: "0.8%", "12%", "<0.1%".
func cpuShare(c float64) string {
	switch {
	case c < 0.0005:
		return "<0.1%"
	}
	return percent(c)
}

// ago is how long ago, in minutes: the live fragment changes once a
// minute for it, not every second.
func minutesAgo(d time.Duration) string {
	if d < time.Minute {
		return "under a minute ago"
	}
	return format.Duration(d.Truncate(time.Minute)) + " ago"
}

// figuresAge says how current the figures are: counts kept current from
// keyspace events, or the pass they come from and how old it is.
func figuresAge(d stats.DBDetail, now time.Time) string {
	if d.CompletedAt.IsZero() {
		return ""
	}
	pass := "the pass completed at " + format.Clock(d.CompletedAt) + " (" + minutesAgo(now.Sub(d.CompletedAt)) + ")"
	if d.CountsLive && !d.CountsSince.IsZero() {
		return "Counts kept current from keyspace events since " + format.Clock(d.CountsSince) + "; memory, TTLs and violations from " + pass + "."
	}
	return "Every figure is from " + pass + "."
}

// method is the "How this was read" disclosure: what a pass reads of each
// key.
func method(d stats.DBDetail, sampled, keys int64) []string {
	var out []string
	out = append(out, "Counted from their names: every key SCAN returns is counted and classified by its name alone, so key counts are exact.")
	if d.SampleSize > 0 {
		out = append(out, "Read whole (type, TTL, size, memory): the first "+format.Count(int64(d.SampleSize))+
			" keys of each family and of the unmatched keys, in SCAN order; a family of at most "+format.Count(int64(d.SampleSize))+
			" keys is read entirely and its figures are exact. Memory margins are 95% confidence intervals.")
	}
	if keys > 0 {
		out = append(out, "The pass shown read "+format.Count(sampled)+" of its "+format.Plural(keys, "key", "keys")+" whole.")
	}
	if d.ReadWhole > 0 || d.TTLOnly > 0 {
		out = append(out, "The latest pass: "+format.Plural(d.ReadWhole, "key", "keys")+" read whole, "+format.Count(d.TTLOnly)+
			" only their TTL (PTTL, in families with a TTL rule); the others counted from their names alone.")
	}
	if d.CountsWhy != "" && !d.CountsLive {
		out = append(out, "Counts are not kept current between passes: "+d.CountsWhy+".")
	}
	return out
}
