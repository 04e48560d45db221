package stats

import "time"

// What a sweep's commands cost Redis, in CPU time per key, measured on
// Redis 7.0 on a 2-core x86-64 machine (make bench-sweep, which also prints
// this model's figure beside the CPU Redis reports): SCAN costs about
// 0.7 µs per key it returns, a pipelined PTTL as much again, and a key read
// whole (TYPE, PTTL, its length and MEMORY USAGE: four pipelined commands)
// about 3.2 µs. A faster or slower server scales them alike; the page calls
// the result an estimate.
const (
	costScanKey  = 700 * time.Nanosecond
	costTTLKey   = 700 * time.Nanosecond
	costWholeKey = 3200 * time.Nanosecond
)

// DefaultSearchRate is each connection's scan budget for the scans people
// start (searches, the user page), in keys per second.
const DefaultSearchRate = 1600

// stepCost is the Redis CPU a sweep step cost: keys SCAN returned, of
// which ttl had their TTL read and whole were read whole.
func stepCost(scanned, ttl, whole int) time.Duration {
	return time.Duration(scanned)*costScanKey + time.Duration(ttl)*costTTLKey + time.Duration(whole)*costWholeKey
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

// cpuShare is the share of a core cost is of elapsed (0 when unknown).
func cpuShare(cost, elapsed time.Duration) float64 {
	if cost <= 0 || elapsed <= 0 {
		return 0
	}
	return float64(cost) / float64(elapsed)
}
