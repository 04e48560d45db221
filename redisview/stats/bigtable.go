package stats

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview"
)

// bigTable is the largest hash or set whose MEMORY USAGE a sweep asks.
// Redis finds the samples of a hash table by walking its buckets from the
// start, and a big table left half-rehashed (after loading) has millions
// of empty buckets there: 10–15 ms measured on a 5,000,000-field hash. A
// bigger hash or set gets an estimate (estimateTables) instead.
const bigTable = 10000

// tableSamples is how many random elements an estimate measures.
const tableSamples = 16

// tableSampleScript returns the byte lengths of up to ARGV[2] random
// elements of a hash (field and value) or a set: lengths only, never the
// bytes (a sensitive family's values never leave Redis).
var tableSampleScript = redis.NewScript(`
local r
if ARGV[1] == 'hash' then
  r = redis.call('HRANDFIELD', KEYS[1], ARGV[2], 'WITHVALUES')
else
  r = redis.call('SRANDMEMBER', KEYS[1], ARGV[2])
end
local out = {}
for i, s in ipairs(r) do out[i] = #s end
return out`)

// estimateTables fills in the memory of the batch's big hashes and sets
// (needsEstimate) from a sample of their elements, one short script each,
// labelled MemoryEstimated. Where scripts are refused their memory stays
// unknown (-1).
func (s *keySweep) estimateTables(ctx context.Context, batch []KeyInfo) error {
	for i := range batch {
		k := &batch[i]
		if !k.needsEstimate {
			continue
		}
		k.needsEstimate = false
		if s.mem.off || k.Elements <= 0 {
			continue
		}
		n, err := sampleTable(ctx, &s.scripts, s.client, k.Name, k.Type, k.Elements)
		if redisview.IsConnErr(err) {
			return err
		}
		if err != nil || n <= 0 {
			continue
		}
		if s.conn != nil {
			s.conn.ScriptCalls(1)
		}
		k.Memory, k.MemoryEstimated = n, true
	}
	return nil
}

// sampleTable estimates the memory of a hash or set of n elements from
// the lengths of a few random elements (one read-only script, tableMemory).
// It returns 0 without an error when scripts are refused or the key gave
// no sample.
func sampleTable(ctx context.Context, scripts *redisview.Scripts, c redis.UniversalClient, key, typ string, n int64) (int64, error) {
	var v []any
	var err error
	switch scripts.Mode(time.Now()) {
	case redisview.ScriptRefused:
		return 0, nil
	case redisview.ScriptEval:
		v, err = tableSampleScript.Run(ctx, c, []string{key}, typ, tableSamples).Slice()
	default:
		v, err = tableSampleScript.RunRO(ctx, c, []string{key}, typ, tableSamples).Slice()
	}
	if err != nil || len(v) == 0 {
		return 0, err
	}
	lens := make([]int64, 0, len(v))
	for _, x := range v {
		l, _ := x.(int64)
		lens = append(lens, l)
	}
	return tableMemory(typ, n, lens), nil
}

// tableMemory estimates what a hash table of n elements takes, from the
// byte lengths of sampled strings (field, value, … for a hash): per
// element its strings as jemalloc allocates them (sds header and NUL
// included), a 24-byte dict entry and its share of the bucket array.
func tableMemory(typ string, n int64, lens []int64) int64 {
	per := 1
	if typ == "hash" {
		per = 2
	}
	elems := int64(len(lens) / per)
	if elems == 0 || n <= 0 {
		return 0
	}
	var bytes int64
	for _, l := range lens[:elems*int64(per)] {
		bytes += jemallocClass(sdsAlloc(l))
	}
	slots := int64(1)
	for slots < n {
		slots <<= 1
	}
	return 16 + 56 + n*(bytes/elems+24) + 8*slots
}

// sdsAlloc is what an sds string of l bytes asks the allocator for.
func sdsAlloc(l int64) int64 {
	switch {
	case l < 1<<5:
		return l + 2
	case l < 1<<8:
		return l + 4
	case l < 1<<16:
		return l + 6
	}
	return l + 10
}

// jemallocClass rounds a request up to jemalloc's size class.
func jemallocClass(n int64) int64 {
	switch {
	case n <= 8:
		return 8
	case n <= 128:
		return (n + 15) / 16 * 16
	}
	p := int64(128)
	for p*2 < n {
		p *= 2
	}
	step := p / 4
	return (n + step - 1) / step * step
}
