package stats

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview"
)

// KeyInfo is what a sweep learns about one key.
type KeyInfo struct {
	Name     string
	Type     string        // string, hash, list, set, zset, stream; "" when the key vanished
	TTL      time.Duration // -1 when the key has no expiry
	Memory   int64         // bytes from MEMORY USAGE; -1 when the server will not say
	Elements int64         // length (STRLEN, HLEN, LLEN, SCARD, ZCARD, XLEN); -1 when unknown
	// MemoryEstimated: Memory is an estimate, not an exact count: Redis's
	// extrapolation from a bounded sample (MEMORY USAGE … SAMPLES 5 of a
	// large hashtable, skiplist, quicklist or stream, on the script path)
	// or Keydeck's from the sizes of a few random elements (big hash
	// tables, on every path).
	MemoryEstimated bool
	// needsEstimate: a hash or set of more than bigTable elements, whose
	// MEMORY USAGE is not asked (keySweep.estimateTables fills it in).
	needsEstimate bool
	// Read is how much of the key the sweep read: readWhole (the fields
	// above), readTTL (Name and TTL) or readName (Name only).
	Read readLevel
	// vanished: PTTL said the key no longer exists (readTTL).
	vanished bool
}

// readLevel is how much of a key a sweep reads (dbAccumulator.plan).
type readLevel uint8

const (
	readWhole readLevel = iota // type, TTL, length and memory
	readTTL                    // its name and TTL (PTTL)
	readName                   // counted from its name, which SCAN returned
)

// gone: the key was deleted between SCAN and its reads.
func (k KeyInfo) gone() bool {
	switch k.Read {
	case readWhole:
		return k.Type == ""
	case readTTL:
		return k.vanished
	}
	return false
}

// SweepBudget bounds what a sweep costs the server.
type SweepBudget struct {
	KeysPerSec int // at most this many keys per second, on average
	Count      int // SCAN COUNT per step
	// CPU is the share of one Redis core a sweep may cost while it runs
	// (0.01: 1%), by the cost model of sweepcost.go: the sweep waits after
	// each step as long as the step cost Redis divided by CPU. 0: no CPU
	// bound (KeysPerSec alone).
	CPU float64
	// Sample is how many keys of each family a pass reads whole (0:
	// DefaultSampleSize).
	Sample int
}

// DefaultSweepBudget keeps a sweep well below what a busy production
// server notices: about 1% of one Redis core while a pass runs (by the cost
// model of sweepcost.go), at most 20,000 keys/s, in SCAN steps of 200 keys
// (a SCAN COUNT 500 step took 1.5 ms of Redis CPU at the median on
// seed-shaped data; 200 keeps a step under 1 ms). Measured by make
// bench-sweep: a 1M-key pass whose families mostly have a TTL rule takes
// about 9 minutes at 1%, 10M about 90 — the floor on that machine, where
// SCAN and PTTL alone cost Redis 3.3–4.8 µs per key, is 56–80 minutes at
// 1% of a core. An unchanged database costs nothing once its pass is done.
var DefaultSweepBudget = SweepBudget{KeysPerSec: 20000, Count: 200, CPU: 0.01, Sample: DefaultSampleSize}

// memorySamples bounds MEMORY USAGE on big aggregates: Redis looks at this
// many nested values and extrapolates, so the command stays O(1)-ish.
const memorySamples = 5

// keySweep walks one database with SCAN, one bounded step at a time: SCAN,
// then one pipeline of PTTL for the keys whose TTL the pass reads, and for
// the keys it reads whole, TYPE and PTTL; then the O(1) length command each
// key's type calls for and MEMORY USAGE (memoryMode.inspect). Pipelines,
// not a script: measured on Redis 7.0 (make bench-sweep), SCAN with
// pipelined PTTL costs Redis 1.4 µs per key (short keys without TTLs), and a read-only script doing
// the same 1.7–2.1 µs (each redis.call costs more than a pipelined command).
type keySweep struct {
	conn   *redisview.Conn // nil in tests that sweep a bare client
	client redis.UniversalClient
	count  int
	cursor redisview.Cursor // on a cluster, one per primary
	mem    memoryMode
	// scripts is how this sweep's server runs the big-table sampling
	// script (estimateTables).
	scripts redisview.Scripts
}

func newKeySweep(conn *redisview.Conn, c redis.UniversalClient, count int) *keySweep {
	if count <= 0 {
		count = DefaultSweepBudget.Count
	}
	return &keySweep{conn: conn, client: c, count: count, cursor: redisview.CursorStart}
}

// step reads one batch, as much of each key as plan says (nil: every key
// whole). done is true when this step finished a full pass (the cursor
// came back to 0); the next step starts a new pass.
func (s *keySweep) step(ctx context.Context, plan func(keys []string) []readLevel) (batch []KeyInfo, done bool, err error) {
	keys, cursor, restarted, err := redisview.ScanStepRestarts(ctx, s.client, s.cursor, "", int64(s.count), "")
	if err != nil {
		return nil, false, err
	}
	if restarted {
		// A cluster shard is walked again (a failover): the pass would
		// count its keys twice. It starts again, every shard from 0.
		s.cursor = redisview.CursorStart
		return nil, false, errPassRestarted
	}
	done = cursor.Done()
	if len(keys) == 0 {
		s.cursor = cursor
		return nil, done, nil
	}
	levels := make([]readLevel, len(keys)) // readWhole
	if plan != nil {
		levels = plan(keys)
	}
	// The cursor moves on only once the batch was read: a step whose
	// reads failed is taken again, its keys with it.
	batch, err = s.read(ctx, keys, levels)
	if err != nil {
		return nil, false, err
	}
	s.cursor = cursor
	return batch, done, nil
}

// read reads keys as levels say: PTTL of the readTTL ones (one pipeline),
// everything of the readWhole ones (memoryMode.inspect).
func (s *keySweep) read(ctx context.Context, keys []string, levels []readLevel) ([]KeyInfo, error) {
	batch := make([]KeyInfo, len(keys))
	var whole, ttl []int
	for i, k := range keys {
		batch[i] = KeyInfo{Name: k, TTL: -1, Memory: -1, Elements: -1, Read: levels[i]}
		switch levels[i] {
		case readWhole:
			whole = append(whole, i)
		case readTTL:
			ttl = append(ttl, i)
		}
	}
	if len(ttl) > 0 {
		ttls := make([]*redis.DurationCmd, len(ttl))
		_, err := s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
			for j, i := range ttl {
				ttls[j] = p.PTTL(ctx, keys[i])
			}
			return nil
		})
		if redisview.IsConnErr(err) {
			return nil, err
		}
		for j, i := range ttl {
			d, err := ttls[j].Result()
			switch {
			case transient(err):
				return nil, fmt.Errorf("PTTL %w", err)
			case err != nil:
				// Refused (ACL): the key is counted from its name.
				batch[i].Read = readName
			case d == -2:
				batch[i].vanished = true
			case d >= 0:
				batch[i].TTL = d
			}
		}
	}
	if len(whole) == 0 {
		return batch, nil
	}
	names := make([]string, len(whole))
	for j, i := range whole {
		names[j] = keys[i]
	}
	infos, err := s.mem.inspect(ctx, s.client, names)
	if err != nil {
		return nil, err
	}
	if err := s.estimateTables(ctx, infos); err != nil {
		return nil, err
	}
	for j, i := range whole {
		infos[j].Read = readWhole
		batch[i] = infos[j]
	}
	return batch, nil
}

// transient tells a reply that says "not now" (the node is loading,
// failing over, or the slot is moving) from a refusal: a key whose TYPE
// got one was not read, and is not a key that vanished.
func transient(err error) bool {
	if err == nil || errors.Is(err, redis.Nil) {
		return false
	}
	if redisview.IsConnErr(err) {
		return true
	}
	msg := err.Error()
	for _, p := range []string{"LOADING", "TRYAGAIN", "CLUSTERDOWN", "MOVED", "ASK", "MASTERDOWN", "BUSY"} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

// errPassRestarted: a cluster shard was walked again from its start, so
// the running pass starts over rather than count its keys twice.
var errPassRestarted = errors.New("a cluster shard failed over or moved mid-pass: the pass starts again")

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

// inspect reads type, TTL, memory and length of keys in pipelined round
// trips: TYPE and PTTL; then the O(1) length command each key's type calls
// for, with MEMORY USAGE of every key but hashes and sets; then MEMORY
// USAGE of the hashes and sets that hold at most bigTable elements. A
// bigger one is marked needsEstimate: MEMORY USAGE would walk its hash
// table's buckets (see bigTable).
func (m *memoryMode) inspect(ctx context.Context, c redis.UniversalClient, keys []string) ([]KeyInfo, error) {
	batch, err := m.shapes(ctx, c, keys)
	if err != nil {
		return nil, err
	}
	withSamples := !m.noSamples // as queued: every key of the batch alike
	mems, err := m.lengths(ctx, c, keys, batch)
	if err != nil {
		return nil, err
	}
	if err := m.tables(ctx, c, keys, batch, mems, withSamples); err != nil {
		return nil, err
	}
	return batch, nil
}

// table is a key whose MEMORY USAGE walks a hash table's buckets.
func table(info KeyInfo) bool { return info.Type == "hash" || info.Type == "set" }

// shapes is the first trip: each key's type and TTL. In strict mode a
// refused command fails the batch.
func (m *memoryMode) shapes(ctx context.Context, c redis.UniversalClient, keys []string) ([]KeyInfo, error) {
	batch := make([]KeyInfo, len(keys))
	types := make([]*redis.StatusCmd, len(keys))
	ttls := make([]*redis.DurationCmd, len(keys))
	cmds, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range keys {
			types[i] = p.Type(ctx, k)
			ttls[i] = p.PTTL(ctx, k)
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
	for i := range keys {
		if err := types[i].Err(); transient(err) {
			return nil, fmt.Errorf("TYPE %w", err)
		}
	}
	for i, k := range keys {
		info := &batch[i]
		info.Name, info.Memory, info.Elements, info.TTL = k, -1, -1, -1
		if t, err := types[i].Result(); err == nil && t != "none" {
			info.Type = t
		}
		if d, err := ttls[i].Result(); err == nil && d >= 0 {
			info.TTL = d
		}
	}
	return batch, nil
}

// lengths is the second trip: each key's O(1) length, with MEMORY USAGE of
// every key but hashes and sets (mems, the commands as queued).
func (m *memoryMode) lengths(ctx context.Context, c redis.UniversalClient, keys []string, batch []KeyInfo) (mems []*redis.IntCmd, err error) {
	lens := make([]*redis.IntCmd, len(keys))
	mems = make([]*redis.IntCmd, len(keys))
	withSamples := !m.noSamples
	_, err = c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range keys {
			lens[i] = redisview.LengthCmd(ctx, p, batch[i].Type, k)
			if batch[i].Type != "" && !table(batch[i]) {
				mems[i] = m.queueMemory(ctx, p, k)
			}
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
		m.absorbMemory(mems[i], &batch[i], withSamples)
	}
	return mems, nil
}

// tables is the last trip: the hashes and sets, now that their size is
// known; and, when this batch taught that the server does not know SAMPLES
// (withSamples: how the second trip queued), every key again without it,
// so no key goes without memory.
func (m *memoryMode) tables(ctx context.Context, c redis.UniversalClient, keys []string, batch []KeyInfo, mems []*redis.IntCmd, withSamples bool) error {
	retry := withSamples && m.noSamples && !m.off
	withSamples = !m.noSamples
	again := make([]*redis.IntCmd, len(keys))
	queued := 0
	for i := range batch {
		switch {
		case batch[i].Type == "" || m.off:
		case table(batch[i]) && batch[i].Elements > bigTable:
			batch[i].needsEstimate = true
		case table(batch[i]) || (retry && mems[i] != nil):
			queued++
		}
	}
	if queued == 0 {
		return nil
	}
	_, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range keys {
			if batch[i].Type != "" && !batch[i].needsEstimate && (table(batch[i]) || (retry && mems[i] != nil)) {
				again[i] = m.queueMemoryOf(ctx, p, k, batch[i])
			}
		}
		return nil
	})
	if redisview.IsConnErr(err) {
		return err
	}
	for i := range batch {
		m.absorbMemory(again[i], &batch[i], withSamples)
	}
	return nil
}

// exactTable is the size up to which a hash or set read whole gets MEMORY
// USAGE … SAMPLES 0, an exact figure, instead of Redis's extrapolation from
// 5 elements, which is biased for a family of hashtable-encoded hashes (make
// bench-sweep: a family's estimate missed its margin in three runs of
// four). Counting 1,000 elements costs Redis about as much as the sweep's
// other reads of the key.
const exactTable = 1000

// queueMemoryOf queues MEMORY USAGE of a key whose type and length are
// known: exact (SAMPLES 0) for a hash or set of at most exactTable
// elements, else as queueMemory.
func (m *memoryMode) queueMemoryOf(ctx context.Context, p redis.Pipeliner, key string, info KeyInfo) *redis.IntCmd {
	if !m.off && !m.noSamples && table(info) && info.Elements >= 0 && info.Elements <= exactTable {
		return p.MemoryUsage(ctx, key, 0)
	}
	return m.queueMemory(ctx, p, key)
}

// queueMemory queues MEMORY USAGE of key as the server takes it; nil when
// the server refused it.
func (m *memoryMode) queueMemory(ctx context.Context, p redis.Pipeliner, key string) *redis.IntCmd {
	switch {
	case m.off:
		return nil
	case m.noSamples:
		return p.MemoryUsage(ctx, key)
	}
	return p.MemoryUsage(ctx, key, memorySamples)
}

// absorbMemory takes a MEMORY USAGE reply (cmd may be nil).
func (m *memoryMode) absorbMemory(cmd *redis.IntCmd, info *KeyInfo, withSamples bool) {
	if cmd == nil {
		return
	}
	n, err := cmd.Result()
	switch {
	case err == nil:
		info.Memory = n
	case err == redis.Nil:
		// The key expired or was deleted since TYPE (an earlier round
		// trip): it is gone, not a key without memory.
		info.Type = ""
	case withSamples && strings.Contains(strings.ToLower(err.Error()), "syntax"):
		// The server knows MEMORY USAGE but not SAMPLES: every key of
		// this batch says so; asked again without it.
		m.noSamples = true
	default:
		m.off = true
		m.Why = redisview.Refusal("MEMORY USAGE", err)
	}
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
	hashTable := enc == "hashtable"
	m.off = hashTable
	infos, err := m.inspect(ctx, cl, []string{key})
	if err != nil {
		return KeyInfo{}, "", c.WrapErr(redisview.ReadError(fmt.Sprintf("reading key %q", clip(key)), err))
	}
	info := infos[0]
	if hashTable && (info.Type == "hash" || info.Type == "set") {
		if info.Elements >= 0 && info.Elements <= bigTable {
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

// estimateMemory estimates a big hash table's memory (sampleTable); it
// returns 0 and why when it cannot sample (scripts refused).
func estimateMemory(ctx context.Context, c *redisview.Conn, cl redis.UniversalClient, key, typ string, n int64) (int64, string) {
	est, err := sampleTable(ctx, c.Scripts(), cl, key, typ, n)
	if err != nil || est <= 0 {
		return 0, "not measured: MEMORY USAGE walks a big hash table's buckets, and scripts, which sample it, are refused"
	}
	c.ScriptCalls(1)
	return est, ""
}

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}
