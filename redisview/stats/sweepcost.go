package stats

import "time"

// What a sweep's commands cost Redis, in CPU time per key, as make
// bench-sweep measured them on Redis 7.0 on a 2-core x86-64 machine with
// seed-shaped data (1M and 10M keys, TTLs on most, names of 30–60 bytes):
// a paced pass of SCAN and pipelined PTTL cost 5.2–5.9 µs per key, where
// the same commands unpaced cost 3.9–4.8 (SCAN alone 2.2–3.1): a step that
// wakes an idle server costs more than its commands. The model prices a key
// SCAN returns at 2.6 µs, its PTTL as much again, and a key read whole
// (TYPE, PTTL, a length and MEMORY USAGE) at 10 µs. (An earlier model of
// 0.7 + 0.7 µs, measured on short keys without TTLs, under-priced the
// sweep four times.) A faster or slower server scales them alike; the page
// calls the result an estimate.
const (
	costScanKey  = 2600 * time.Nanosecond
	costTTLKey   = 2600 * time.Nanosecond
	costWholeKey = 10 * time.Microsecond
)

// DefaultSearchRate is each connection's scan budget for the scans people
// start (searches, the user page), in keys per second.
const DefaultSearchRate = 1600

// stepCost is the Redis CPU a sweep step cost: keys SCAN returned, of
// which ttl had their TTL read and whole were read whole.
func stepCost(scanned, ttl, whole int) time.Duration {
	return time.Duration(scanned)*costScanKey + time.Duration(ttl)*costTTLKey + time.Duration(whole)*costWholeKey
}

// batchCost is stepCost of a step's batch.
func batchCost(batch []KeyInfo) time.Duration {
	ttl, whole := 0, 0
	for _, k := range batch {
		switch k.Read {
		case readTTL:
			ttl++
		case readWhole:
			whole++
		}
	}
	return stepCost(len(batch), ttl, whole)
}

// stepWait is how long a sweep waits after a step of n keys that cost
// Redis cost and took took, to stay within the budget: n keys at
// KeysPerSec, and cost at CPU of a core.
func (b SweepBudget) stepWait(n int, cost, took time.Duration) time.Duration {
	wait := time.Duration(n) * time.Second / time.Duration(max(b.KeysPerSec, 1))
	if b.CPU > 0 {
		wait = max(wait, time.Duration(float64(cost)/b.CPU))
	}
	return wait - took
}

// cpuShare is the share of a core a pass's cost is of the time it took
// (0 when unknown). The sweep waits after each step, the last one too, for
// as long as the budget wants; that wait is not yet in elapsed when the
// pass has just finished (a small database's pass is one step and a few
// milliseconds), so a pass takes at least cost / CPU.
func (b SweepBudget) cpuShare(cost, elapsed time.Duration) float64 {
	if b.CPU > 0 {
		elapsed = max(elapsed, time.Duration(float64(cost)/b.CPU))
	}
	if cost <= 0 || elapsed <= 0 {
		return 0
	}
	return float64(cost) / float64(elapsed)
}
