package demo

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// testHost runs one bare demo server (no seed, no clock: the test ticks).
type testHost struct {
	*host
	t    *testing.T
	base time.Time
}

func startHost(t *testing.T) *testHost {
	t.Helper()
	base := time.Now()
	h, err := runHost(base)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.close)
	h.setTime(base)
	return &testHost{host: h, t: t, base: base}
}

// client opens a connection to database db speaking RESP protocol proto.
func (th *testHost) client(db, proto int) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: th.addr(), DB: db, Protocol: proto,
		DisableIdentity: true, PoolSize: 1})
	th.t.Cleanup(func() { _ = c.Close() })
	return c
}

func infoFields(t *testing.T, c *redis.Client, sections ...string) map[string]string {
	t.Helper()
	txt, err := c.Info(context.Background(), sections...).Result()
	if err != nil {
		t.Fatalf("INFO %v: %v", sections, err)
	}
	out := map[string]string{}
	for _, line := range strings.Split(txt, "\r\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && !strings.HasPrefix(line, "#") {
			out[k] = v
		}
	}
	return out
}

func intField(t *testing.T, f map[string]string, name string) int64 {
	t.Helper()
	v, ok := f[name]
	if !ok {
		t.Fatalf("INFO has no %s", name)
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		t.Fatalf("INFO %s = %q, not an integer", name, v)
	}
	return n
}

func TestHostInfoHasWhatKeydeckReads(t *testing.T) {
	t.Parallel()
	th := startHost(t)
	ctx := context.Background()
	for _, proto := range []int{2, 3} {
		c := th.client(3, proto)
		c.Set(ctx, "with-ttl", "v", time.Hour)
		c.Set(ctx, "no-ttl", "v", 0)
		th.measureMemory()
		f := infoFields(t, c)
		for _, name := range []string{"redis_version", "redis_mode", "server_name", "run_id"} {
			if f[name] == "" {
				t.Errorf("RESP%d: INFO %s empty", proto, name)
			}
		}
		for _, name := range []string{"uptime_in_seconds", "connected_clients", "used_memory", "used_memory_peak",
			"maxmemory", "total_commands_processed", "instantaneous_ops_per_sec", "keyspace_hits",
			"keyspace_misses", "evicted_keys", "expired_keys", "tcp_port"} {
			intField(t, f, name)
		}
		if intField(t, f, "used_memory") <= 0 || intField(t, f, "connected_clients") < 1 {
			t.Errorf("RESP%d: used_memory %s, connected_clients %s", proto, f["used_memory"], f["connected_clients"])
		}
		if !strings.HasPrefix(f["db3"], "keys=2,expires=1,avg_ttl=") {
			t.Errorf("RESP%d: db3 = %q", proto, f["db3"])
		}
		avg, _ := strconv.Atoi(strings.TrimPrefix(f["db3"], "keys=2,expires=1,avg_ttl="))
		if avg <= 3590_000 || avg > 3600_000 {
			t.Errorf("RESP%d: avg_ttl %d ms, want about an hour", proto, avg)
		}
		if _, ok := f["db0"]; ok {
			t.Errorf("RESP%d: an empty database is listed: %q", proto, f["db0"])
		}

		ks := infoFields(t, c, "keyspace")
		if len(ks) != 1 || ks["db3"] != f["db3"] {
			t.Errorf("RESP%d: INFO keyspace = %v", proto, ks)
		}
		two := infoFields(t, c, "server", "STATS")
		if _, ok := two["redis_version"]; !ok {
			t.Errorf("RESP%d: INFO server stats lacks server", proto)
		}
		if _, ok := two["keyspace_hits"]; !ok || two["used_memory"] != "" || two["role"] != "" {
			t.Errorf("RESP%d: INFO server stats = %v", proto, two)
		}
		if txt := c.Info(ctx, "nosuchsection").Val(); txt != "" {
			t.Errorf("RESP%d: INFO of an unknown section = %q, want empty as on Redis", proto, txt)
		}
	}
}

func TestHostCountsLookupsInTheSelectedDatabase(t *testing.T) {
	t.Parallel()
	th := startHost(t)
	ctx := context.Background()
	db0, db5 := th.client(0, 3), th.client(5, 2)
	db5.Set(ctx, "k", "v", 0)
	db5.HSet(ctx, "h", "f", "1")

	hits := func() (int64, int64) {
		f := infoFields(t, db0, "stats")
		return intField(t, f, "keyspace_hits"), intField(t, f, "keyspace_misses")
	}
	h0, m0 := hits()
	db5.Get(ctx, "k")                                                       // hit
	db0.Get(ctx, "k")                                                       // miss: k lives in db 5
	db5.MGet(ctx, "k", "nope", "k")                                         // 2 hits, 1 miss
	db5.HGet(ctx, "h", "no-such-field")                                     // a hit: the key exists
	db5.Exists(ctx, "k", "nope")                                            // 1 hit, 1 miss
	db5.Type(ctx, "h")                                                      // hit
	db5.MemoryUsage(ctx, "nope", 5)                                         // miss
	db5.Set(ctx, "w", "1", 0)                                               // a write: no lookup
	db5.Scan(ctx, 0, "", 10)                                                // no lookup
	db5.Eval(ctx, "return redis.call('GET', KEYS[1])", []string{"k"})       // hit inside a script
	db5.Eval(ctx, "return redis.call('GET', KEYS[1])", []string{"missing"}) // miss inside a script
	if _, err := db5.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Get(ctx, "k") // queued: not counted
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	h1, m1 := hits()
	if h1-h0 != 7 || m1-m0 != 5 {
		t.Errorf("hits +%d, misses +%d; want +7, +5", h1-h0, m1-m0)
	}
}

func TestHostCountsCommandsButNotItsOwnProbes(t *testing.T) {
	t.Parallel()
	th := startHost(t)
	ctx := context.Background()
	c := th.client(2, 3)
	c.Set(ctx, "k", "v", 0)
	t0 := intField(t, infoFields(t, c, "stats"), "total_commands_processed")
	for range 5 {
		c.Get(ctx, "k") // each probed with EXISTS
	}
	c.ConfigGet(ctx, "maxmemory")
	th.measureMemory()
	th.tick(th.base.Add(clockTick), clockTick)
	t1 := intField(t, infoFields(t, c, "stats"), "total_commands_processed")
	// The first INFO, five GETs and CONFIG GET; not the probes, the
	// memory walk or the tick's key counts.
	if t1-t0 != 7 {
		t.Errorf("total_commands_processed grew by %d, want 7", t1-t0)
	}
}

func TestHostOpsPerSecIsTheRecentCommandRate(t *testing.T) {
	t.Parallel()
	th := startHost(t)
	ctx := context.Background()
	c := th.client(0, 3)
	for range 30 {
		c.Incr(ctx, "n")
	}
	total := th.commands()
	th.tick(th.base.Add(time.Second), time.Second)
	if got := intField(t, infoFields(t, c, "stats"), "instantaneous_ops_per_sec"); got != total {
		t.Errorf("instantaneous_ops_per_sec = %d after %d commands in one second", got, total)
	}
	th.tick(th.base.Add(2*time.Second), time.Second) // one INFO in the second second
	if got := intField(t, infoFields(t, c, "stats"), "instantaneous_ops_per_sec"); got != (total+1)/2 {
		t.Errorf("instantaneous_ops_per_sec = %d, want the mean of %d and 1", got, total)
	}
}

// Keys that expire on a tick are counted exactly, while other clients
// write and delete keys at the same moment; deleted keys are not expired.
func TestHostCountsExpiredKeysExactly(t *testing.T) {
	t.Parallel()
	th := startHost(t)
	ctx := context.Background()
	c := th.client(4, 3)
	const n = 200
	for i := range n {
		c.Set(ctx, fmt.Sprintf("short:%d", i), "v", time.Duration(1+i)*time.Millisecond)
	}
	c.Set(ctx, "deleted", "v", 50*time.Millisecond)
	c.Del(ctx, "deleted")

	// Other clients create and delete keys all the while: a tick that
	// counted the keyspace while they ran would take a deleted key for an
	// expired one, or miss an expiry.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		noise := th.client(w, 3)
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				k := fmt.Sprintf("noise:%d", i%7)
				if i%2 == 0 {
					noise.Set(ctx, k, "v", time.Hour)
				} else {
					noise.Del(ctx, k)
				}
			}
		})
	}
	now := th.base
	for range 100 {
		now = now.Add(3 * time.Millisecond)
		th.tick(now, 3*time.Millisecond)
	}
	close(stop)
	wg.Wait()
	if got := intField(t, infoFields(t, c, "stats"), "expired_keys"); got != n {
		t.Errorf("expired_keys = %d, want %d", got, n)
	}
	if left := c.DBSize(ctx).Val(); left != 0 {
		t.Errorf("%d keys left in db 4", left)
	}
}

func TestHostMemory(t *testing.T) {
	t.Parallel()
	th := startHost(t)
	ctx := context.Background()
	c := th.client(7, 3)
	c.Set(ctx, "s", strings.Repeat("x", 1000), 0)
	members := make([]redis.Z, 200)
	for i := range members {
		members[i] = redis.Z{Score: float64(i), Member: fmt.Sprintf("player-%03d", i)}
	}
	c.ZAdd(ctx, "board", members...)
	th.client(0, 3).HSet(ctx, "elsewhere", "a", "1", "b", "2")

	plain, err := c.Do(ctx, "MEMORY", "USAGE", "board").Int64()
	if err != nil || plain <= 200*10 {
		t.Fatalf("MEMORY USAGE board = %d, %v", plain, err)
	}
	for _, samples := range []int{0, 5, 1000} {
		if n, err := c.MemoryUsage(ctx, "board", samples).Result(); err != nil || n != plain {
			t.Errorf("MEMORY USAGE board SAMPLES %d = %d, %v; want %d", samples, n, err, plain)
		}
	}
	if err := c.MemoryUsage(ctx, "missing", 5).Err(); err != redis.Nil {
		t.Errorf("MEMORY USAGE of a missing key: %v, want nil", err)
	}
	for _, bad := range [][]any{{"SAMPLES", "-1"}, {"SAMPLES"}, {"COUNT", "5"}} {
		err := c.Do(ctx, append([]any{"MEMORY", "USAGE", "board"}, bad...)...).Err()
		if err == nil || err.Error() != "ERR syntax error" {
			t.Errorf("MEMORY USAGE board %v: %v, want Redis's syntax error", bad, err)
		}
	}
	if err := c.Do(ctx, "MEMORY", "USAGE", "board", "SAMPLES", "x").Err(); err == nil || !strings.Contains(err.Error(), "not an integer") {
		t.Errorf("SAMPLES x: %v", err)
	}

	th.measureMemory()
	var want int64
	for db, keys := range map[int][]string{7: {"s", "board"}, 0: {"elsewhere"}} {
		for _, k := range keys {
			n, err := th.client(db, 2).MemoryUsage(ctx, k).Result()
			if err != nil {
				t.Fatal(err)
			}
			want += n + int64(len(k))
		}
	}
	f := infoFields(t, c, "memory")
	if used := intField(t, f, "used_memory"); used != want {
		t.Errorf("used_memory = %d, want %d (every value's MEMORY USAGE plus its key's name)", used, want)
	}
	c.Del(ctx, "board")
	th.measureMemory()
	f = infoFields(t, c, "memory")
	if used, peak := intField(t, f, "used_memory"), intField(t, f, "used_memory_peak"); used >= want || peak != want {
		t.Errorf("after a delete: used %d, peak %d; want less than %d, and %d", used, peak, want, want)
	}
	if f["maxmemory"] != "0" || f["maxmemory_policy"] != "noeviction" || !strings.HasSuffix(f["used_memory_human"], "K") {
		t.Errorf("memory section: %v", f)
	}
}

func TestHostConfigAndSlowlog(t *testing.T) {
	t.Parallel()
	th := startHost(t)
	ctx := context.Background()
	for _, proto := range []int{2, 3} {
		c := th.client(0, proto)
		got, err := c.ConfigGet(ctx, "notify-keyspace-events").Result()
		if v, ok := got["notify-keyspace-events"]; err != nil || !ok || v != "" {
			t.Errorf("RESP%d: CONFIG GET notify-keyspace-events = %v, %v; want present and empty", proto, got, err)
		}
		got, _ = c.ConfigGet(ctx, "MAXMEMORY*").Result()
		// Redis 7.0's five, the demo's values.
		if len(got) != 5 || got["maxmemory"] != "0" || got["maxmemory-policy"] != "noeviction" || got["maxmemory-samples"] != "5" {
			t.Errorf("RESP%d: CONFIG GET maxmemory* = %v", proto, got)
		}
		if got, _ = c.ConfigGet(ctx, "no-such-setting").Result(); len(got) != 0 {
			t.Errorf("RESP%d: CONFIG GET of an unknown setting = %v", proto, got)
		}
	}
	c := th.client(0, 3)
	if err := c.ConfigSet(ctx, "notify-keyspace-events", "KEA").Err(); err == nil {
		t.Error("CONFIG SET notify-keyspace-events succeeded on a server that publishes no events")
	}

	if n, err := c.SlowLogLen(ctx).Result(); err != nil || n != 0 {
		t.Errorf("SLOWLOG LEN = %d, %v", n, err)
	}
	if logs, err := c.SlowLogGet(ctx, -1).Result(); err != nil || len(logs) != 0 {
		t.Errorf("SLOWLOG GET = %v, %v", logs, err)
	}
	if err := c.ConfigSet(ctx, "slowlog-log-slower-than", "0").Err(); err != nil {
		t.Fatal(err)
	}
	c.Set(ctx, "k", strings.Repeat("v", 300), 0)
	logs, err := c.SlowLogGet(ctx, 1).Result()
	if err != nil || len(logs) != 1 {
		t.Fatalf("SLOWLOG GET 1 = %v, %v", logs, err)
	}
	e := logs[0]
	if len(e.Args) != 3 || e.Args[0] != "set" || e.Args[1] != "k" || e.Args[2] != strings.Repeat("v", 128)+"... (172 more bytes)" ||
		time.Since(e.Time) > time.Minute || e.Duration < 0 {
		t.Errorf("slow log entry %+v", e)
	}
	if n := c.SlowLogLen(ctx).Val(); n < 2 {
		t.Errorf("SLOWLOG LEN = %d after logging every command", n)
	}
	if err := c.Do(ctx, "SLOWLOG", "RESET").Err(); err != nil {
		t.Fatal(err)
	}
	c.ConfigSet(ctx, "slowlog-log-slower-than", "10000")
	// SLOWLOG RESET is logged under the old threshold, CONFIG SET under the
	// one it sets, as on Redis.
	if logs := c.SlowLogGet(ctx, -1).Val(); len(logs) != 1 || logs[0].Args[0] != "SLOWLOG" {
		t.Errorf("slow log after RESET: %v", logs)
	}

	c.Get(ctx, "k")
	if err := c.Do(ctx, "CONFIG", "RESETSTAT").Err(); err != nil {
		t.Fatal(err)
	}
	f := infoFields(t, c, "stats")
	if intField(t, f, "keyspace_hits") != 0 || intField(t, f, "total_commands_processed") != 1 {
		t.Errorf("after CONFIG RESETSTAT: %v", f)
	}
}

// Inside MULTI the host answers nothing itself: miniredis queues every
// command and EXEC replies in order.
func TestHostLeavesTransactionsToMiniredis(t *testing.T) {
	t.Parallel()
	th := startHost(t)
	ctx := context.Background()
	c := th.client(1, 3)
	c.Set(ctx, "k", "value", 0)
	var info *redis.StringCmd
	var mem *redis.IntCmd
	var get *redis.StringCmd
	if _, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		info = p.Info(ctx, "stats")
		mem = p.MemoryUsage(ctx, "k", 5)
		get = p.Get(ctx, "k")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(info.Val(), "total_commands_processed") || mem.Val() <= 0 || get.Val() != "value" {
		t.Errorf("EXEC replies: INFO %q, MEMORY USAGE %d, GET %q", info.Val(), mem.Val(), get.Val())
	}
	// Out of the transaction again, INFO is the host's.
	if f := infoFields(t, c); f["redis_version"] != redisVersion {
		t.Errorf("INFO after EXEC: %v", f)
	}
	c.Do(ctx, "MULTI")
	c.Do(ctx, "INFO")
	if err := c.Do(ctx, "DISCARD").Err(); err != nil {
		t.Fatal(err)
	}
	if f := infoFields(t, c); f["redis_version"] != redisVersion {
		t.Errorf("INFO after DISCARD: %v", f)
	}
}

// keydeckReads are the INFO fields Keydeck's overview reads
// (redisview/stats: serverStats and keyspaceStats).
var keydeckReads = []string{
	"redis_version", "redis_mode", "uptime_in_seconds",
	"used_memory", "used_memory_peak", "maxmemory",
	"connected_clients",
	"total_commands_processed", "instantaneous_ops_per_sec",
	"keyspace_hits", "keyspace_misses", "evicted_keys", "expired_keys",
}

// The demo answers every INFO field, keyspace figure and command Keydeck
// reads from a real redis-server, in the same form.
func TestHostAnswersWhatRealRedisAnswers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	real := redistest.Start(t)
	th := startHost(t)
	clients := map[string]func(db int) *redis.Client{
		"redis-server": real.Client,
		"demo":         func(db int) *redis.Client { return th.client(db, 3) },
	}
	infos := map[string]map[string]string{}
	for name, client := range clients {
		for _, db := range []int{0, 9} {
			c := client(db)
			c.Set(ctx, "a", "1", time.Hour)
			c.Set(ctx, "b", "2", 0)
			c.Get(ctx, "a")
		}
		c := client(0)
		infos[name] = infoFields(t, c)
		if m, err := c.ConfigGet(ctx, "notify-keyspace-events").Result(); err != nil {
			t.Errorf("%s: CONFIG GET: %v", name, err)
		} else if _, ok := m["notify-keyspace-events"]; !ok {
			t.Errorf("%s: CONFIG GET has no notify-keyspace-events: %v", name, m)
		}
		if n, err := c.MemoryUsage(ctx, "a", 5).Result(); err != nil || n <= 0 {
			t.Errorf("%s: MEMORY USAGE a SAMPLES 5 = %d, %v", name, n, err)
		}
		if _, err := c.SlowLogGet(ctx, 10).Result(); err != nil {
			t.Errorf("%s: SLOWLOG GET: %v", name, err)
		}
		if _, err := c.Do(ctx, "SLOWLOG", "LEN").Int64(); err != nil {
			t.Errorf("%s: SLOWLOG LEN: %v", name, err)
		}
	}
	realInfo, demoInfo := infos["redis-server"], infos["demo"]
	for _, field := range append(keydeckReads, "db0", "db9") {
		rv, ok := realInfo[field]
		if !ok {
			t.Errorf("redis-server's INFO has no %s: keydeckReads is out of date", field)
			continue
		}
		dv, ok := demoInfo[field]
		if !ok {
			t.Errorf("the demo's INFO has no %s (redis-server: %q)", field, rv)
			continue
		}
		if _, err := strconv.ParseInt(rv, 10, 64); err == nil {
			if _, err := strconv.ParseInt(dv, 10, 64); err != nil {
				t.Errorf("%s: redis-server %q is an integer, the demo's %q is not", field, rv, dv)
			}
		}
	}
	for _, db := range []string{"db0", "db9"} {
		if realKS, demoKS := keyspaceNames(realInfo[db]), keyspaceNames(demoInfo[db]); realKS != demoKS {
			t.Errorf("%s: redis-server has %s, the demo %s", db, realKS, demoKS)
		}
		if !strings.HasPrefix(demoInfo[db], "keys=2,expires=1,avg_ttl=") {
			t.Errorf("demo %s = %q", db, demoInfo[db])
		}
	}
	if realInfo["redis_mode"] != demoInfo["redis_mode"] {
		t.Errorf("redis_mode: redis-server %q, demo %q", realInfo["redis_mode"], demoInfo["redis_mode"])
	}
}

// keyspaceNames lists the names of a keyspace line's figures that Redis 7.0
// reports (7.4 adds subexpiry, which the demo has no hash-field TTLs for).
func keyspaceNames(line string) string {
	var names []string
	for _, kv := range strings.Split(line, ",") {
		if k, _, _ := strings.Cut(kv, "="); k != "subexpiry" {
			names = append(names, k)
		}
	}
	return strings.Join(names, ",")
}
