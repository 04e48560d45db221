package stats_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/clock"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview/stats"
)

// mixedData writes every type in both its compact and its large encoding,
// half of them with a TTL, some keys of eIsland families (one breaking its
// pack) and some keys no family matches. It returns how many keys are
// large collections in a non-compact encoding (asked with OBJECT
// ENCODING): the keys whose memory the script samples.
func mixedData(t *testing.T, c *redis.Client) (sampled int64) {
	t.Helper()
	ctx := context.Background()
	p := c.Pipeline()
	p.Set(ctx, "s:int", "12345", 0)
	p.Set(ctx, "s:embstr", "short value", time.Hour)
	p.Set(ctx, "s:raw", strings.Repeat("r", 100), 0)
	p.Set(ctx, "s:big", strings.Repeat("b", 200_000), 3*time.Hour)
	p.HSet(ctx, "h:small", "a", "1", "b", "2")
	for i := range 300 {
		p.HSet(ctx, "h:big", fmt.Sprintf("field-%d", i), fmt.Sprintf("value-%d", i))
		p.SAdd(ctx, "set:big", fmt.Sprintf("member-%d", i))
		p.ZAdd(ctx, "z:big", redis.Z{Score: float64(i), Member: fmt.Sprintf("m-%d", i)})
		p.RPush(ctx, "l:big", fmt.Sprintf("item-%d", i))
	}
	p.Expire(ctx, "h:big", 2*time.Hour)
	p.Expire(ctx, "z:big", 30*time.Second)
	p.SAdd(ctx, "set:ints", 1, 2, 3, 4, 5, 6, 7, 8)
	p.SAdd(ctx, "set:small", "x", "y")
	p.ZAdd(ctx, "z:small", redis.Z{Score: 1, Member: "a"}, redis.Z{Score: 2, Member: "b"})
	p.RPush(ctx, "l:small", "a", "b", "c")
	for i := range 8 {
		p.XAdd(ctx, &redis.XAddArgs{Stream: "x:stream", Values: []any{"n", i}})
	}
	big := make([]redis.Z, 200)
	for i := range big {
		big[i] = redis.Z{Score: float64(i * 7), Member: fmt.Sprintf("player-%d", i)}
	}
	p.ZAdd(ctx, "mg:score:leaderboard:snake", big...)
	p.ZAdd(ctx, "mg:score:leaderboard:tetris", big[:20]...)
	p.Set(ctx, "mg:score:leaderboard:2048", "not a zset", 0)
	for i := range 25 {
		p.Set(ctx, fmt.Sprintf("mg:score:high:%d:user%d", i%3, i), i*10, time.Duration(i+1)*time.Minute)
		p.Set(ctx, fmt.Sprintf("legacy:thing:%d", i), "x", 0)
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	keys, cursor := []string{}, uint64(0)
	for {
		ks, cur, err := c.Scan(ctx, cursor, "", 100).Result()
		if err != nil {
			t.Fatal(err)
		}
		keys, cursor = append(keys, ks...), cur
		if cursor == 0 {
			break
		}
	}
	for _, k := range keys {
		typ := c.Type(ctx, k).Val()
		enc := c.ObjectEncoding(ctx, k).Val()
		var n int64
		switch typ {
		case "hash":
			n = c.HLen(ctx, k).Val()
		case "set":
			n = c.SCard(ctx, k).Val()
		case "zset":
			n = c.ZCard(ctx, k).Val()
		case "list":
			n = c.LLen(ctx, k).Val()
		case "stream":
			n = c.XLen(ctx, k).Val()
		default:
			continue
		}
		if n > 5 && enc != "listpack" && enc != "ziplist" && enc != "intset" {
			sampled++
		}
	}
	return sampled
}

// withoutEstimates clears what only the script path knows (which memory
// figures are sampled) and how each read, to compare the figures.
func withoutEstimates(d stats.DBDetail) stats.DBDetail {
	d.MemoryEstimated, d.ReadPath = 0, ""
	for _, l := range []*[]stats.BigKey{&d.ByMemory, &d.ByElements, &d.ByLength} {
		*l = append([]stats.BigKey(nil), (*l)...)
		for i := range *l {
			(*l)[i].MemoryEstimated = false
		}
	}
	return d
}

func commandCalls(t *testing.T, c *redis.Client) map[string]int64 {
	t.Helper()
	txt, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	return redistest.ParseCommandStats(txt)
}

// A server that knows MEMORY USAGE but not SAMPLES (bare miniredis) still
// gets memory for every key it reads whole.
func TestMemoryWithoutSamplesOption(t *testing.T) {
	m := miniredis.RunT(t)
	c := openConn(t, "redis://"+m.Addr())
	cl := redis.NewClient(&redis.Options{Addr: m.Addr(), DisableIdentity: true})
	t.Cleanup(func() { _ = cl.Close() })
	for i := range 30 {
		cl.Set(context.Background(), fmt.Sprintf("k%d", i), strings.Repeat("v", i+1), 0)
	}
	d, err := stats.SweepPass(context.Background(), c, 0)
	if err != nil {
		t.Fatal(err)
	}
	if d.MemoryWhy != "" || d.Memory <= 0 || d.UnmCount != 30 || len(d.ByMemory) != 10 {
		t.Fatalf("%+v", d)
	}
}

// timedOut: a read that ran past the client's timeout (a net.Error that
// says so), not a wrong answer.
func timedOut(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// While nothing changes, a completed pass stays current: no new pass reads
// the database (no SCAN, no script), the detail says since when it is
// unchanged; one SET starts a new pass, which sees the new key.
func TestSweepSkipsUnchangedDatabase(t *testing.T) {
	ctx := context.Background()
	rs := redistest.Start(t)
	admin, data := rs.Client(0), rs.Client(5)
	for i := range 50 {
		data.Set(ctx, fmt.Sprintf("k:%d", i), "v", 0)
	}
	c := openConn(t, rs.URL(0))
	pctx, cancel := context.WithCancel(ctx)
	clk := clock.NewFake(time.Now())
	pool := stats.NewSweepers(pctx, stats.SweepBudget{KeysPerSec: 100000, Count: 500}, time.Minute, quiet(), stats.WithClock(clk))
	t.Cleanup(func() { cancel(); pool.Wait() })
	s, release := pool.Acquire(c, 5)
	defer release()
	// The pass interval (stats.minPassInterval): a sweeper that finished a
	// pass, or found the database unchanged, waits this long on its clock.
	const passInterval = 2 * time.Second
	waiting := func() { // until the sweeper waits on the clock
		t.Helper()
		bctx, stop := context.WithTimeout(ctx, 15*time.Second)
		defer stop()
		if err := clk.BlockUntil(bctx, 1); err != nil {
			t.Fatalf("the sweeper does not wait: %v", err)
		}
	}
	waitPass := func(n int) stats.DBDetail {
		t.Helper()
		var d stats.DBDetail
		redistest.Eventually(t, 15*time.Second, fmt.Sprintf("pass %d", n), func() bool {
			d = s.Detail(stats.TotalKeys(ctx, c, 5))
			return d.Pass >= n
		})
		return d
	}
	first := waitPass(1)
	waiting()
	if first.UnmCount != 50 || first.ReadPath != "pipelines" {
		t.Fatalf("first pass: %d keys, %q", first.UnmCount, first.ReadPath)
	}
	admin.ConfigResetStat(ctx)
	for range 3 { // three pass intervals, each ending in a check of the database
		clk.Advance(passInterval)
		waiting()
	}
	d := s.Detail(stats.TotalKeys(ctx, c, 5))
	if d.Pass != 1 || d.UnchangedSince.IsZero() || d.UnchangedSince.After(first.CompletedAt) {
		t.Fatalf("unchanged database: pass %d, unchanged since %v (completed %v)", d.Pass, d.UnchangedSince, first.CompletedAt)
	}
	calls := commandCalls(t, admin)
	if n := calls["scan"] + calls["evalsha_ro"] + calls["evalsha"] + calls["type"]; n != 0 || calls["info"] == 0 {
		t.Fatalf("an unchanged database was read again: %v", calls)
	}
	data.Set(ctx, "k:new", "v", 0)
	clk.Advance(passInterval)
	d = waitPass(2)
	if d.UnmCount != 51 {
		t.Fatalf("pass after a SET: %d keys", d.UnmCount)
	}
	if calls := commandCalls(t, admin); calls["keys"] != 0 {
		t.Fatal("KEYS was sent")
	}
}

// A Redis user who may not run MEMORY USAGE is still swept, by the script
// or the pipelines, with every other figure, and the page says why memory
// is missing.
func TestSweepWithoutMemoryACL(t *testing.T) {
	ctx := context.Background()
	rs := redistest.Start(t)
	admin := rs.Client(0)
	mixedData(t, rs.Client(14))
	if err := admin.Do(ctx, "ACL", "SETUSER", "nomem", "on", ">pw", "~*", "&*", "+@all", "-memory").Err(); err != nil {
		t.Fatal(err)
	}
	full := openConn(t, rs.URL(0))
	want, err := stats.SweepPass(ctx, full, 14)
	if err != nil {
		t.Fatal(err)
	}
	limited := openConn(t, fmt.Sprintf("redis://nomem:pw@%s/0", rs.Addr))
	got, err := stats.SweepPass(ctx, limited, 14)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("read path %q, memory: %q", got.ReadPath, got.MemoryWhy)
	if got.MemoryWhy == "" || got.Memory != 0 || len(got.ByMemory) != 0 {
		t.Fatalf("memory without MEMORY USAGE: %q %d %+v", got.MemoryWhy, got.Memory, got.ByMemory)
	}
	if got.UnmCount != want.UnmCount || !reflect.DeepEqual(got.Unmatched, want.Unmatched) || len(got.ByElements) != len(want.ByElements) {
		t.Fatalf("figures differ without MEMORY USAGE: %+v vs %+v", got.Unmatched, want.Unmatched)
	}
}

// A hash or set of more than 10,000 elements gets no MEMORY USAGE, on
// either path (Redis walks a big hash table's buckets for its samples:
// 10–15 ms on a half-rehashed one): its memory is an estimate from a
// sample of element lengths, labelled, within a third of the truth.
func TestSweepEstimatesBigTables(t *testing.T) {
	ctx := context.Background()
	rs := redistest.Start(t)
	admin, data := rs.Client(0), rs.Client(2)
	for i := 0; i < 20000; i += 1000 {
		p := data.Pipeline()
		for j := i; j < i+1000; j++ {
			p.HSet(ctx, "big:hash", fmt.Sprintf("field:%d", j), strings.Repeat("v", j%40))
			p.SAdd(ctx, "big:set", fmt.Sprintf("member:%07d", j))
		}
		if _, err := p.Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	data.Set(ctx, "small", "x", 0)
	truth := map[string]int64{}
	for _, k := range []string{"big:hash", "big:set"} {
		truth[k] = data.MemoryUsage(ctx, k, 0).Val()
	}
	c := openConn(t, rs.URL(0))
	admin.ConfigSet(ctx, "slowlog-log-slower-than", "0")
	admin.ConfigSet(ctx, "slowlog-max-len", "10000")
	admin.Do(ctx, "SLOWLOG", "RESET")
	d, err := stats.SweepPass(ctx, c, 2)
	if err != nil {
		t.Fatal(err)
	}
	logs := admin.SlowLogGet(ctx, 10000).Val()
	for _, l := range logs {
		if len(l.Args) >= 3 && strings.EqualFold(l.Args[0], "memory") && strings.HasPrefix(l.Args[2], "big:") {
			t.Errorf("%v sent", l.Args)
		}
	}
	got := map[string]stats.BigKey{}
	for _, b := range d.ByMemory {
		got[b.Key] = b
	}
	for k, want := range truth {
		b := got[k]
		if !b.MemoryEstimated || b.Memory < want*2/3 || b.Memory > want*4/3 {
			t.Errorf("%s memory %d (estimated %v), MEMORY USAGE SAMPLES 0 says %d", k, b.Memory, b.MemoryEstimated, want)
		}
	}
	if b := got["small"]; b.Memory <= 0 || b.MemoryEstimated {
		t.Errorf("small key %+v", b)
	}
	if d.MemoryEstimated != 2 {
		t.Errorf("%d estimates, want 2", d.MemoryEstimated)
	}

}
