package stats

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview"
)

// KeyInfo is what a sweep learns about one key.
type KeyInfo struct {
	Name   string
	Type   string        // string, hash, list, set, zset, stream; "" when the key vanished
	TTL    time.Duration // -1 when the key has no expiry
	Memory int64         // bytes from MEMORY USAGE; -1 when the server will not say
	// MemoryEstimated: Memory is Keydeck's estimate from a sample of
	// element sizes, not MEMORY USAGE's (InspectKey, big hash tables).
	MemoryEstimated bool
	Elements        int64 // length (STRLEN, HLEN, LLEN, SCARD, ZCARD, XLEN); -1 when unknown
}

// SweepBudget bounds what a sweep costs the server.
type SweepBudget struct {
	KeysPerSec int // average rate over time
	Count      int // SCAN COUNT per step
}

// DefaultSweepBudget keeps a sweep well below what a busy production
// server notices: 2,000 keys/s in batches of 200.
var DefaultSweepBudget = SweepBudget{KeysPerSec: 2000, Count: 200}

// memorySamples bounds MEMORY USAGE on big aggregates: Redis looks at this
// many nested values and extrapolates, so the command stays O(1)-ish.
const memorySamples = 5

// keySweep walks one database with SCAN, one bounded step at a time. Each
// step is three pipelined round trips: SCAN; TYPE, PTTL and MEMORY USAGE of
// the batch; then the O(1) length command each key's type calls for.
type keySweep struct {
	client *redis.Client
	count  int
	cursor uint64
	mem    memoryMode
}

func newKeySweep(c *redis.Client, count int) *keySweep {
	if count <= 0 {
		count = DefaultSweepBudget.Count
	}
	return &keySweep{client: c, count: count}
}

// step reads one batch. done is true when this step finished a full pass
// (the cursor came back to 0); the next step starts a new pass.
func (s *keySweep) step(ctx context.Context) (batch []KeyInfo, done bool, err error) {
	keys, cursor, err := s.client.Scan(ctx, s.cursor, "", int64(s.count)).Result()
	if err != nil {
		return nil, false, err
	}
	s.cursor = cursor
	done = cursor == 0
	if len(keys) == 0 {
		return nil, done, nil
	}
	batch, err = s.mem.inspect(ctx, s.client, keys)
	if err != nil {
		return nil, false, err
	}
	return batch, done, nil
}

// memoryMode remembers what a server said about MEMORY USAGE.
type memoryMode struct {
	off bool // the server refused MEMORY USAGE
	// strict: TYPE and PTTL must each get a reply (one key's page), where
	// a sweep counts what it can.
	strict bool
	// noSamples is set on servers that know MEMORY USAGE but not its
	// SAMPLES option (the embedded demo server).
	noSamples bool
	Why       string // why memory is unknown
}

// inspect reads type, TTL, memory and length of keys in two pipelined round
// trips: TYPE, PTTL and MEMORY USAGE; then the O(1) length command each
// key's type calls for.
func (m *memoryMode) inspect(ctx context.Context, c *redis.Client, keys []string) ([]KeyInfo, error) {
	batch := make([]KeyInfo, len(keys))
	types := make([]*redis.StatusCmd, len(keys))
	ttls := make([]*redis.DurationCmd, len(keys))
	mems := make([]*redis.IntCmd, len(keys))
	withSamples := !m.noSamples // as queued: every key of the batch alike
	cmds, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range keys {
			types[i] = p.Type(ctx, k)
			ttls[i] = p.PTTL(ctx, k)
			switch {
			case m.off:
			case m.noSamples:
				mems[i] = p.MemoryUsage(ctx, k)
			default:
				mems[i] = p.MemoryUsage(ctx, k, memorySamples)
			}
		}
		return nil
	})
	if redisview.IsConnErr(err) {
		return nil, err
	}
	if m.strict {
		if err := redisview.PipelineErr(cmds, err); err != nil {
			return nil, err
		}
		for i := range keys {
			if err := cmdErr(types[i]); err != nil {
				return nil, err
			}
			if err := cmdErr(ttls[i]); err != nil {
				return nil, err
			}
		}
	}
	lens := make([]*redis.IntCmd, len(keys))
	_, err = c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range keys {
			info := &batch[i]
			info.Name, info.Memory, info.Elements, info.TTL = k, -1, -1, -1
			if t, err := types[i].Result(); err == nil && t != "none" {
				info.Type = t
			}
			if d, err := ttls[i].Result(); err == nil && d >= 0 {
				info.TTL = d
			}
			if mems[i] != nil {
				if n, err := mems[i].Result(); err == nil {
					info.Memory = n
				} else if err != redis.Nil {
					if withSamples && strings.Contains(strings.ToLower(err.Error()), "syntax") {
						// The server knows MEMORY USAGE but not SAMPLES: every
						// key of this batch says so; retried without next time.
						m.noSamples = true
					} else {
						m.off = true
						m.Why = redisview.Refusal("MEMORY USAGE", err)
					}
				}
			}
			lens[i] = lengthCmd(ctx, p, info.Type, k)
		}
		return nil
	})
	if redisview.IsConnErr(err) {
		return nil, err
	}
	for i := range batch {
		if lens[i] != nil {
			if n, err := lens[i].Result(); err == nil {
				batch[i].Elements = n
			}
		}
	}
	return batch, nil
}

// InspectKey reads one key's type, TTL, memory and length. Its Type is ""
// when the key does not exist.
//
// Unlike a sweep, which counts what it can, it fails with ErrRead when the
// server did not answer TYPE or PTTL (ACL, authentication, unreachable):
// a refusal must not read as "this key does not exist".
//
// MEMORY USAGE is not sent for a hash or set encoded as a big hash table:
// Redis finds its samples by walking the table's buckets from the start,
// and a table left half-rehashed (a 5,000,000-field hash after loading)
// has millions of empty buckets there — 10–15 ms measured. Such a key's
// memory is estimated instead (MemoryEstimated) from the lengths of a few
// random elements (one read-only script; see estimateMemory).
func InspectKey(ctx context.Context, c *redisview.Conn, db int, key string) (KeyInfo, string, error) {
	cl := c.DB(db)
	// An error (ACL, the demo's unknown OBJECT ENCODING) leaves "": the
	// reads below say what they say.
	enc, _ := cl.ObjectEncoding(ctx, key).Result()
	var m memoryMode
	m.strict = true
	bigTable := enc == "hashtable"
	m.off = bigTable
	infos, err := m.inspect(ctx, cl, []string{key})
	if err != nil {
		return KeyInfo{}, "", c.WrapErr(redisview.ReadError(fmt.Sprintf("reading key %q", clip(key)), err))
	}
	info := infos[0]
	if bigTable && (info.Type == "hash" || info.Type == "set") {
		if info.Elements >= 0 && info.Elements <= exactTable {
			if n, err := cl.MemoryUsage(ctx, key, memorySamples).Result(); err == nil {
				info.Memory = n
			}
		} else if n, why := estimateMemory(ctx, c, cl, key, info.Type, info.Elements); n > 0 {
			info.Memory, info.MemoryEstimated = n, true
		} else {
			return info, why, nil
		}
	}
	return info, m.Why, nil
}

// exactTable is the largest hash table whose MEMORY USAGE is asked: its
// bucket walk stays well under a millisecond.
const exactTable = 10000

// sampleSource returns the byte lengths of up to ARGV[2] random elements
// of a hash (field and value) or a set: lengths only, never the bytes.
var sampleSource = redis.NewScript(`
local r
if ARGV[1] == 'hash' then
  r = redis.call('HRANDFIELD', KEYS[1], ARGV[2], 'WITHVALUES')
else
  r = redis.call('SRANDMEMBER', KEYS[1], ARGV[2])
end
local out = {}
for i, s in ipairs(r) do out[i] = #s end
return out`)

// estimateSamples is how many random elements an estimate measures.
const estimateSamples = 16

// estimateMemory estimates what a hash table of n elements takes: per
// element, its strings as jemalloc allocates them (sds header and NUL
// included), a 24-byte dict entry and its share of the bucket array. It
// returns 0 and why when it cannot sample (scripts refused).
func estimateMemory(ctx context.Context, c *redisview.Conn, cl *redis.Client, key, typ string, n int64) (int64, string) {
	if n <= 0 {
		return 0, "not measured"
	}
	why := "not measured: MEMORY USAGE walks a big hash table's buckets, and scripts, which sample it, are refused"
	var v []any
	var err error
	switch c.Scripts().Mode(time.Now()) {
	case redisview.ScriptRefused:
		return 0, why
	case redisview.ScriptEval:
		v, err = sampleSource.Run(ctx, cl, []string{key}, typ, estimateSamples).Slice()
	default:
		v, err = sampleSource.RunRO(ctx, cl, []string{key}, typ, estimateSamples).Slice()
	}
	if err != nil || len(v) == 0 {
		return 0, why
	}
	c.ScriptCalls(1)
	per := 1 // strings per element
	if typ == "hash" {
		per = 2
	}
	var bytes int64
	for _, x := range v {
		l, _ := x.(int64)
		bytes += jemallocSize(sdsSize(l))
	}
	elems := int64(len(v) / per)
	if elems == 0 {
		return 0, why
	}
	slots := int64(1)
	for slots < n {
		slots <<= 1
	}
	return 16 + 56 + n*(bytes/elems+24) + 8*slots, ""
}

// sdsSize is what an sds string of l bytes asks the allocator for.
func sdsSize(l int64) int64 {
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

// jemallocSize rounds a request up to jemalloc's size class.
func jemallocSize(n int64) int64 {
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

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

// lengthCmd queues the O(1) length command for a key of type t.
func lengthCmd(ctx context.Context, p redis.Pipeliner, t, key string) *redis.IntCmd {
	switch strings.ToLower(t) {
	case "string":
		return p.StrLen(ctx, key)
	case "hash":
		return p.HLen(ctx, key)
	case "list":
		return p.LLen(ctx, key)
	case "set":
		return p.SCard(ctx, key)
	case "zset":
		return p.ZCard(ctx, key)
	case "stream":
		return p.XLen(ctx, key)
	}
	return nil
}
