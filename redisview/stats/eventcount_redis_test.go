package stats

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview/schema"
)

const liveCountsPack = `name: livecounts
title: Live counts
families:
  - id: fam-a
    db: 0
    pattern: "a:{id}"
    type: string
    ttl: any
    domain: Test
    role: record
    description: Family a in database 0.
  - id: fam-b
    db: 0
    pattern: "b:{id}"
    type: string
    ttl: any
    domain: Test
    role: record
    description: Family b in database 0.
  - id: fam-a1
    db: 1
    pattern: "a:{id}"
    type: string
    ttl: any
    domain: Test
    role: record
    description: Family a in database 1.
`

// familyCounts is a database's keys by family id ("" for no family),
// counted with SCAN (each key once: SCAN may return one twice).
func familyCounts(t *testing.T, ctx context.Context, db *redis.Client, n int, cl *schema.Classifier) map[string]int64 {
	t.Helper()
	seen := map[string]bool{}
	var cur uint64
	for {
		keys, next, err := db.Scan(ctx, cur, "*", 1000).Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			seen[k] = true
		}
		if cur = next; cur == 0 {
			break
		}
	}
	out := map[string]int64{}
	for k := range seen {
		if f, ok := cl.Classify(n, k); ok {
			out[f.ID]++
		} else {
			out[""]++
		}
	}
	return out
}

// liveSnapshot is the deltas of a liveCounts by family id ("" no family).
func liveSnapshot(l *liveCounts) (map[string]int64, int64, int64) {
	fam, unm, total := l.Deltas()
	out := map[string]int64{"": unm}
	for f, d := range fam {
		out[f.ID] = d
	}
	return out, total, l.Unsure()
}

func sub(a, b map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for k, v := range a {
		out[k] += v
	}
	for k, v := range b {
		out[k] -= v
	}
	for k, v := range out {
		if v == 0 {
			delete(out, k)
		}
	}
	return out
}

func sameCounts(a, b map[string]int64) bool {
	a, b = sub(a, map[string]int64{}), sub(b, map[string]int64{})
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// barrier waits until every event published before it was applied: the
// events of one subscription arrive in the server's order, so once the
// consumer hears a write made now, it has heard all before it.
type barrier struct {
	mu   sync.Mutex
	seen map[string]bool
	n    int
}

func (b *barrier) event(db int, key, _ string) {
	if db != 9 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.seen == nil {
		b.seen = map[string]bool{}
	}
	b.seen[key] = true
}

func (b *barrier) wait(t *testing.T, ctx context.Context, s *redistest.Server) {
	t.Helper()
	b.mu.Lock()
	b.n++
	key := fmt.Sprintf("barrier:%d", b.n)
	b.mu.Unlock()
	if err := s.Client(9).Set(ctx, key, 1, 0).Err(); err != nil {
		t.Fatal(err)
	}
	redistest.Eventually(t, 10*time.Second, "the barrier's event", func() bool {
		b.mu.Lock()
		defer b.mu.Unlock()
		return b.seen[key]
	})
}

func infoKeys(t *testing.T, ctx context.Context, s *redistest.Server, db int) int64 {
	t.Helper()
	txt, err := s.Client(0).Info(ctx, "keyspace").Result()
	if err != nil {
		t.Fatal(err)
	}
	return ParseInfo(txt).Keyspace()[db].Keys
}

// Every way a key comes and goes on redis-server 7.0, with
// notify-keyspace-events KEA plus n: the per-family deltas a liveCounts
// keeps from the events equal the change in the per-family counts SCAN
// finds — but for a key written over by RENAME, COPY … REPLACE or
// RESTORE … REPLACE (counted once too many, and in Unsure), and FLUSHDB
// and SWAPDB, which publish nothing per key: drift, which Drifted finds
// against INFO keyspace.
func TestLiveCountsFollowRedis(t *testing.T) {
	s := redistest.Start(t, "--enable-debug-command", "yes")
	ctx := context.Background()
	db0, db1 := s.Client(0), s.Client(1)
	if err := db0.ConfigSet(ctx, "notify-keyspace-events", "KEAn").Err(); err != nil {
		t.Fatal(err)
	}
	flags, err := db0.ConfigGet(ctx, "notify-keyspace-events").Result()
	if err != nil {
		t.Fatal(err)
	}
	// Redis 7.0 does not show n beside A.
	if f := flags["notify-keyspace-events"]; f != "AKE" || !NewHidden(f) {
		t.Fatalf("KEAn reads back %q", f)
	}
	pack, err := schema.Load("livecounts.yaml", []byte(liveCountsPack))
	if err != nil {
		t.Fatal(err)
	}
	c := openConn(t, s.URL(0))
	c.ForcePack(pack)
	cl := c.Classifier()
	lc0 := newLiveCounts(0, c.Classifier, nil)
	lc1 := newLiveCounts(1, c.Classifier, nil)
	// The barrier is a consumer of its own: each event is handed to
	// every consumer before the next.
	var bar barrier
	defer c.OnKeyEvent(bar.event, nil)()
	defer lc0.Follow(c)()
	defer lc1.Follow(c)()
	redistest.Eventually(t, 10*time.Second, "subscribed", func() bool { return c.Keyspace().Subscribed })
	for _, l := range []*liveCounts{lc0, lc1} {
		l.FlagsFrom(c.Keyspace())
	}

	do := func(cmds ...[]any) func() {
		return func() {
			for _, a := range cmds {
				db := db0
				if a[0] == 1 {
					db, a = db1, a[1:]
				}
				if err := db.Do(ctx, a...).Err(); err != nil && err != redis.Nil {
					t.Fatalf("%v: %v", a, err)
				}
			}
		}
	}
	refused := func(a ...any) func() {
		return func() {
			if err := db0.Do(ctx, a...).Err(); err == nil {
				t.Fatalf("%v accepted", a)
			}
		}
	}
	cmd := func(a ...any) []any { return a }
	dump := func(key string) string {
		v, err := db0.Dump(ctx, key).Result()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	bigValue := strings.Repeat("x", 10000)

	type change struct {
		name  string
		setup func()
		op    func()
		// over: the family ids ("" none) of keys the events count in
		// once too many (written over by RENAME, COPY, RESTORE), in db0.
		over   map[string]int64
		unsure int64 // Unsure's rise
		drift  bool  // no per-key events: drift
		db1    bool  // the change is in db1 too
	}
	changes := []change{
		{name: "SET a new key", op: do(cmd("SET", "a:1", "v"))},
		{name: "SET an existing key", op: do(cmd("SET", "a:1", "w"))},
		{name: "SET a key of no family", op: do(cmd("SET", "zz:1", "v"))},
		{name: "SET NX on an existing key", op: do(cmd("SET", "a:1", "v", "NX"))},
		{name: "MSET a new and an existing key", op: do(cmd("MSET", "a:1", "x", "b:1", "y"))},
		{name: "INCR and APPEND new keys", op: do(cmd("INCR", "a:n"), cmd("APPEND", "b:ap", "z"))},
		{name: "HSET, LPUSH, SADD, ZADD, XADD new keys", op: do(cmd("HSET", "a:h", "f", "v"), cmd("RPUSH", "a:l", "x"),
			cmd("SADD", "b:s", "x"), cmd("ZADD", "b:z", 1, "x"), cmd("XADD", "zz:x", "*", "f", "v"))},
		{name: "DEL", op: do(cmd("DEL", "a:1", "a:missing"))},
		{name: "UNLINK", op: do(cmd("UNLINK", "b:1"))},
		{name: "GETDEL", setup: do(cmd("SET", "a:gd", "v")), op: do(cmd("GETDEL", "a:gd"))},
		{name: "EXPIRE 0 deletes", setup: do(cmd("SET", "a:e0", "v")), op: do(cmd("EXPIRE", "a:e0", 0))},
		{name: "PEXPIREAT in the past deletes", setup: do(cmd("SET", "b:pa", "v")), op: do(cmd("PEXPIREAT", "b:pa", 1))},
		{name: "SET EX 0 is refused", op: refused("SET", "a:ex0", "v", "EX", 0)},
		{name: "GETEX EX 0 is refused", setup: do(cmd("SET", "a:gx", "v")), op: refused("GETEX", "a:gx", "EX", 0)},
		{name: "SREM of the last member", op: do(cmd("SREM", "b:s", "x"))},
		{name: "LPOP of the last element", op: do(cmd("LPOP", "a:l"))},
		{name: "HDEL of the last field", op: do(cmd("HDEL", "a:h", "f"))},
		{name: "ZPOPMIN of the last member", op: do(cmd("ZPOPMIN", "b:z"))},
		{name: "SMOVE of the last member to a new set", setup: do(cmd("SADD", "a:sm", "x")), op: do(cmd("SMOVE", "a:sm", "b:sm", "x"))},
		{name: "LMOVE of the last element to a new list", setup: do(cmd("RPUSH", "a:lm", "x")), op: do(cmd("LMOVE", "a:lm", "zz:lm", "LEFT", "LEFT"))},
		{name: "SINTERSTORE of nothing deletes the destination", setup: do(cmd("SADD", "a:st", "x")), op: do(cmd("SINTERSTORE", "a:st", "a:nothing"))},
		{name: "RPOPLPUSH of a one-element list onto itself", setup: do(cmd("RPUSH", "a:rot", "x")), op: do(cmd("RPOPLPUSH", "a:rot", "a:rot"))},
		{name: "SETRANGE with nothing on a missing key", op: do(cmd("SETRANGE", "a:sr", 0, ""))},
		{name: "SORT STORE, PFADD, ZUNIONSTORE of new keys", setup: do(cmd("RPUSH", "a:so", 3, 1, 2)),
			op: do(cmd("SORT", "a:so", "STORE", "b:sorted"), cmd("PFADD", "a:hll", "x"), cmd("ZADD", "a:zsrc", 1, "m"), cmd("ZUNIONSTORE", "zz:zu", 1, "a:zsrc"))},
		{name: "SORT STORE of nothing deletes the destination", op: do(cmd("SORT", "a:nothing", "STORE", "b:sorted"))},
		{name: "XDEL of a stream's last entry keeps it", setup: do(cmd("XADD", "a:xs", "1-1", "f", "v")), op: do(cmd("XDEL", "a:xs", "1-1"))},
		{name: "EXPIRE in the future and PERSIST", setup: do(cmd("SET", "a:ttl", "v")), op: do(cmd("EXPIRE", "a:ttl", 100), cmd("PERSIST", "a:ttl"))},
		{name: "DEL of three keys at once", setup: do(cmd("MSET", "a:d1", 1, "b:d2", 2, "zz:d3", 3)), op: do(cmd("DEL", "a:d1", "b:d2", "zz:d3"))},
		{name: "MULTI: a new key and a deletion", setup: do(cmd("SET", "b:m1", "v")), op: func() {
			_, err := db0.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.Set(ctx, "a:m2", "v", 0)
				p.Del(ctx, "b:m1")
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}},
		{name: "RENAME onto a new name", setup: do(cmd("SET", "a:r1", "v")), op: do(cmd("RENAME", "a:r1", "b:r1")), unsure: 1},
		{name: "RENAME onto an existing name", setup: do(cmd("SET", "a:r2", "v"), cmd("SET", "b:r2", "v")),
			op: do(cmd("RENAME", "a:r2", "b:r2")), over: map[string]int64{"fam-b": 1}, unsure: 1},
		{name: "RENAME onto an existing name of no family", setup: do(cmd("SET", "a:r3", "v"), cmd("SET", "zz:r3", "v")),
			op: do(cmd("RENAME", "a:r3", "zz:r3")), over: map[string]int64{"": 1}, unsure: 1},
		{name: "RENAME onto itself", setup: do(cmd("SET", "a:self", "v")), op: do(cmd("RENAME", "a:self", "a:self"))},
		{name: "RENAMENX onto an existing name is a no", setup: do(cmd("SET", "a:nx1", "v"), cmd("SET", "b:nx1", "v")),
			op: do(cmd("RENAMENX", "a:nx1", "b:nx1"))},
		{name: "MOVE to another database", setup: do(cmd("SET", "a:mv", "v")), op: do(cmd("MOVE", "a:mv", 1)), db1: true},
		{name: "MOVE onto an existing key is a no", setup: do(cmd("SET", "a:mv2", "v"), cmd(1, "SET", "a:mv2", "v")),
			op: do(cmd("MOVE", "a:mv2", 1)), db1: true},
		{name: "COPY onto a new name", setup: do(cmd("SET", "a:c", "v")), op: do(cmd("COPY", "a:c", "b:c")), unsure: 1},
		{name: "COPY REPLACE onto an existing name", setup: do(cmd("SET", "b:c2", "v")),
			op: do(cmd("COPY", "a:c", "b:c2", "REPLACE")), over: map[string]int64{"fam-b": 1}, unsure: 1},
		{name: "COPY onto an existing name is a no", op: do(cmd("COPY", "a:c", "b:c2"))},
		{name: "COPY to another database", op: do(cmd("COPY", "a:c", "a:c", "DB", 1)), db1: true},
		{name: "RESTORE a new key", op: func() { do(cmd("RESTORE", "b:rs", 0, dump("a:c")))() }, unsure: 1},
		{name: "RESTORE REPLACE an existing key", op: func() { do(cmd("RESTORE", "b:rs", 0, dump("a:c"), "REPLACE"))() },
			over: map[string]int64{"fam-b": 1}, unsure: 1},
		{name: "expiry on access (lazy)", setup: do(cmd("DEBUG", "SET-ACTIVE-EXPIRE", 0), cmd("SET", "a:lazy", "v", "PX", 300)),
			op: func() {
				time.Sleep(400 * time.Millisecond)
				do(cmd("GET", "a:lazy"), cmd("DEBUG", "SET-ACTIVE-EXPIRE", 1))()
			}},
		{name: "expiry by the active cycle", setup: func() {
			for i := range 20 {
				do(cmd("SET", fmt.Sprintf("a:act:%d", i), "v", "PX", 300))()
			}
		}, op: func() {
			n := infoKeys(t, ctx, s, 0)
			redistest.Eventually(t, 10*time.Second, "20 keys expired", func() bool { return infoKeys(t, ctx, s, 0) <= n-20 })
		}},
		{name: "eviction (allkeys-lru)", setup: func() {
			for i := range 100 {
				do(cmd("SET", fmt.Sprintf("a:big:%d", i), bigValue))()
			}
		}, op: func() {
			txt, err := db0.Info(ctx, "memory").Result()
			if err != nil {
				t.Fatal(err)
			}
			used, _ := ParseInfo(txt).Int("used_memory")
			do(cmd("CONFIG", "SET", "maxmemory-policy", "allkeys-lru"), cmd("CONFIG", "SET", "maxmemory", used-300000))()
			do(cmd("SET", "a:big:last", "v"))() // evicts before it runs
			do(cmd("CONFIG", "SET", "maxmemory", 0))()
			st, err := db0.Info(ctx, "stats").Result()
			if err != nil {
				t.Fatal(err)
			}
			if n, _ := ParseInfo(st).Int("evicted_keys"); n < 10 {
				t.Fatalf("%d keys evicted", n)
			}
		}, db1: true},
		{name: "FLUSHDB", setup: do(cmd("SET", "a:f1", "v")), op: do(cmd("FLUSHDB")), drift: true},
		// Databases of different sizes: swapping two of the same size
		// leaves INFO keyspace's totals as they were.
		{name: "SWAPDB", setup: do(cmd("SET", "a:s0", "v"), cmd("SET", "b:s0", "v"), cmd(1, "MSET", "a:s1", 1, "a:s2", 2, "a:s3", 3, "a:s4", 4, "a:s5", 5)),
			op: do(cmd("SWAPDB", 0, 1)), drift: true, db1: true},
	}

	// pass counts both databases like a finished pass and resets.
	var pass0 int64
	pass := func() {
		pass0 = 0
		for _, n := range familyCounts(t, ctx, db0, 0, cl) {
			pass0 += n
		}
		lc0.Reset()
		lc1.Reset()
	}
	pass()
	// The connection read "AKE": n is hidden until a new key is heard.
	if ok, _, why := lc0.Live(); ok || !strings.Contains(why, `reads "AKE"`) {
		t.Fatalf("live before a new key was heard: %v %q", ok, why)
	}

	for _, ch := range changes {
		if ch.setup != nil {
			ch.setup()
		}
		bar.wait(t, ctx, s)
		real0, real1 := familyCounts(t, ctx, db0, 0, cl), familyCounts(t, ctx, db1, 1, cl)
		ev0, tot0, uns0 := liveSnapshot(lc0)
		ev1, tot1, _ := liveSnapshot(lc1)
		ch.op()
		bar.wait(t, ctx, s)
		realD0 := sub(familyCounts(t, ctx, db0, 0, cl), real0)
		realD1 := sub(familyCounts(t, ctx, db1, 1, cl), real1)
		after0, atot0, auns0 := liveSnapshot(lc0)
		after1, atot1, _ := liveSnapshot(lc1)
		evD0, evD1 := sub(after0, ev0), sub(after1, ev1)
		var realTot0 int64
		for _, d := range realD0 {
			realTot0 += d
		}
		if ch.drift {
			if len(evD0) != 0 || len(evD1) != 0 || sameCounts(realD0, evD0) {
				t.Errorf("%s: events %v %v, SCAN %v %v: want no events and a change", ch.name, evD0, evD1, realD0, realD1)
			}
			if d, why := lc0.Drifted(pass0, infoKeys(t, ctx, s, 0)); !d || why == "" {
				t.Errorf("%s: no drift found", ch.name)
			}
			pass()
			continue
		}
		if want := sub(realD0, sub(map[string]int64{}, ch.over)); !sameCounts(evD0, want) {
			t.Errorf("%s: db0 events %v, want %v (SCAN %v)", ch.name, evD0, want, realD0)
		}
		if !sameCounts(evD1, realD1) {
			t.Errorf("%s: db1 events %v, SCAN %v", ch.name, evD1, realD1)
		}
		var over int64
		for _, n := range ch.over {
			over += n
		}
		if atot0-tot0 != realTot0+over {
			t.Errorf("%s: total %d, SCAN %d", ch.name, atot0-tot0, realTot0)
		}
		if u := auns0 - uns0; u != ch.unsure {
			t.Errorf("%s: Unsure rose by %d, want %d", ch.name, u, ch.unsure)
		}
		if !ch.db1 && (len(realD1) != 0 || atot1 != tot1) {
			t.Errorf("%s: db1 changed: SCAN %v, events %d", ch.name, realD1, atot1-tot1)
		}
		if ok, _, why := lc0.Live(); !ok {
			t.Errorf("%s: not live: %s", ch.name, why)
		}
		if d, why := lc0.Drifted(pass0, infoKeys(t, ctx, s, 0)); d {
			t.Errorf("%s: drift: %s", ch.name, why)
		}
		t.Logf("%-50s db0 %v db1 %v unsure +%d", ch.name, evD0, evD1, auns0-uns0)
	}
}

// SWAPDB of two databases of as many keys leaves INFO keyspace as it was
// — Drifted cannot see it — but INFO commandstats shows it, as it shows
// FLUSHDB and FLUSHALL (of any database) and a reset of the statistics.
func TestSilentWritesFoundInCommandstats(t *testing.T) {
	s := redistest.Start(t)
	ctx := context.Background()
	read := func() Info {
		txt, err := s.Client(0).Info(ctx, "commandstats").Result()
		if err != nil {
			t.Fatal(err)
		}
		return ParseInfo(txt)
	}
	for db := range 2 {
		if err := s.Client(db).MSet(ctx, "a:1", 1, "a:2", 2, "b:1", 3).Err(); err != nil {
			t.Fatal(err)
		}
	}
	before := read()
	if got := silentWrites(before, read()); len(got) != 0 {
		t.Fatalf("nothing run, found %q", got)
	}
	if err := s.Client(0).Do(ctx, "SWAPDB", 0, 1).Err(); err != nil {
		t.Fatal(err)
	}
	if drifted(3, infoKeys(t, ctx, s, 0)) {
		t.Fatal("INFO keyspace changed with SWAPDB of two databases of 3 keys")
	}
	after := read()
	if got := silentWrites(before, after); len(got) != 1 || got[0] != "SWAPDB" {
		t.Fatalf("after SWAPDB: %q", got)
	}
	if err := s.Client(5).FlushDB(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if err := s.Client(0).FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if got := silentWrites(after, read()); len(got) != 2 || got[0] != "FLUSHALL" || got[1] != "FLUSHDB" {
		t.Fatalf("after FLUSHDB and FLUSHALL: %q", got)
	}
	before = read()
	if err := s.Client(0).ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if got := silentWrites(before, read()); len(got) != 1 || !strings.Contains(got[0], "RESETSTAT") {
		t.Fatalf("after CONFIG RESETSTAT: %q", got)
	}
	if got := silentWrites(Info{}, read()); len(got) != 0 {
		t.Fatalf("without a first reading: %q", got)
	}
}

// A cluster's events come from every primary on subscriptions of their
// own, interleaved: the counts kept from them match SCAN over every
// primary, and a rename's Unsure is found across the interleaving.
func TestLiveCountsFollowACluster(t *testing.T) {
	cl := redistest.StartCluster(t)
	ctx := context.Background()
	for _, n := range cl.Nodes {
		if err := n.Client(0).ConfigSet(ctx, "notify-keyspace-events", "Kgxen").Err(); err != nil {
			t.Fatal(err)
		}
	}
	pack, err := schema.Load("livecounts.yaml", []byte(liveCountsPack))
	if err != nil {
		t.Fatal(err)
	}
	c := openConn(t, cl.URL())
	if err := c.Detect(ctx); err != nil || !c.IsCluster() {
		t.Fatalf("detect: %v (cluster %v)", err, c.IsCluster())
	}
	c.ForcePack(pack)
	classifier := c.Classifier()
	l := newLiveCounts(0, c.Classifier, nil)
	defer l.Follow(c)()
	redistest.Eventually(t, 10*time.Second, "subscribed to every primary", func() bool { return c.Keyspace().Subscribed })
	l.FlagsFrom(c.Keyspace())
	counts := func() map[string]int64 {
		out := map[string]int64{}
		for _, p := range cl.Primaries() {
			for f, n := range familyCounts(t, ctx, p.Client(0), 0, classifier) {
				out[f] += n
			}
		}
		return out
	}
	cl.Fill("a:", 200)
	cl.Fill("b:", 100)
	before := counts()
	l.Reset()
	if ok, _, why := l.Live(); !ok {
		t.Fatalf("not live: %s", why)
	}
	cc := cl.Client()
	p := cc.Pipeline()
	for i := range 300 {
		p.Set(ctx, fmt.Sprintf("a:new:%d", i), 1, 0)
		p.Set(ctx, fmt.Sprintf("zz:%d", i), 1, 0)
	}
	for i := range 100 {
		p.Del(ctx, fmt.Sprintf("a:%d", i))
		p.Set(ctx, fmt.Sprintf("b:%d", i), 1, 10*time.Millisecond)
	}
	for i := range 20 { // one slot each: a:{i}x onto b:{i}x, new or existing
		p.Set(ctx, fmt.Sprintf("a:{%d}x", i), 1, 0)
		if i%2 == 0 {
			p.Set(ctx, fmt.Sprintf("b:{%d}x", i), 1, 0)
		}
		p.Rename(ctx, fmt.Sprintf("a:{%d}x", i), fmt.Sprintf("b:{%d}x", i))
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	// The b: keys expire: wait for the active cycle of every primary.
	redistest.Eventually(t, 10*time.Second, "the b: keys expired", func() bool { return counts()["fam-b"] == 20 })
	var want map[string]int64
	redistest.Eventually(t, 10*time.Second, "the counts kept equal SCAN's (the renames onto existing keys aside)", func() bool {
		want = sub(counts(), before)
		want["fam-b"] += 10 // ten renames wrote over an existing key: counted in once too many
		got, _, _ := liveSnapshot(l)
		return sameCounts(got, want)
	})
	if u := l.Unsure(); u != 20 {
		t.Fatalf("unsure %d, want 20 (every rename)", u)
	}
	t.Logf("deltas %v", want)
}
