// Command bench-limits measures what the Rate limits page costs Redis: it
// starts a redis-server on a free port, loads 100,000 slider token buckets,
// 100,000 login failure windows (1% of them locked) and 10,000 payment
// locks the way eIsland writes them, starts the real keydeck binary, and
// reports the time from the first viewer's connection until a throttled
// row shows in its frames; Redis commands per second (INFO commandstats
// deltas, the bench's own INFO, SLOWLOG and CONFIG excluded) with 1 viewer
// and with 100 websocket viewers of the Rate limits page, each for a fixed
// time, and their ratio (target ≤ 1.1×); and the slowest command Keydeck
// sent (SLOWLOG, every command logged while a run is measured).
//
// Mode first-view measures the Rate limits and Locks pages over HTTP as a
// person opening them sees them: time to first byte, time to the whole
// body and the body's size, cold (a freshly started keydeck, no sweep
// running: each cold load restarts the binary) and warm (the sweep
// running for -warm-after).
//
//	go run ./cmd/bench-limits [-mode all|first-view|viewers] [-duration 20s] [-viewers 1,100]
package main

import (
	"context"
	"encoding/base64"
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/handlers"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/internal/route"
)

func main() {
	dur := flag.Duration("duration", 20*time.Second, "measurement window per viewer count")
	counts := flag.String("viewers", "1,100", "viewer counts to measure")
	buckets := flag.Int("buckets", 100_000, "slider token buckets")
	windows := flag.Int("windows", 100_000, "login failure windows")
	locks := flag.Int("locks", 10_000, "payment locks")
	poll := flag.Duration("poll-interval", time.Second, "Keydeck's poll interval")
	mode := flag.String("mode", "all", "what to measure: first-view (page loads), viewers (Redis cost per viewer count) or all")
	runs := flag.Int("runs", 5, "first-view: loads per page, cold and warm")
	warm := flag.Duration("warm-after", 5*time.Second, "first-view: how long the sweep runs before the warm loads")
	flag.Parse()
	if *mode != "all" && *mode != "first-view" && *mode != "viewers" {
		fmt.Fprintln(os.Stderr, "bench-limits: -mode is all, first-view or viewers")
		os.Exit(2)
	}
	fv := firstView{runs: *runs, warmAfter: *warm, on: *mode != "viewers"}
	if err := bench(*dur, *counts, *buckets, *windows, *locks, *poll, fv, *mode != "first-view"); err != nil {
		fmt.Fprintln(os.Stderr, "bench-limits:", err)
		os.Exit(1)
	}
}

func bench(dur time.Duration, counts string, buckets, windows, locks int, poll time.Duration, fv firstView, viewers bool) error {
	tmp, err := os.MkdirTemp("", "keydeck-bench-limits")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	redisAddr, stopRedis, err := redistest.Launch(tmp)
	if err != nil {
		return err
	}
	defer stopRedis()
	t0 := time.Now()
	if err := load(redisAddr, buckets, windows, locks); err != nil {
		return err
	}
	fmt.Printf("loaded %d slider buckets, %d login windows, %d locks in %s\n", buckets, windows, locks, time.Since(t0).Round(time.Millisecond))

	bin := filepath.Join(tmp, "keydeck")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/web").CombinedOutput(); err != nil {
		return fmt.Errorf("build keydeck: %v\n%s", err, out)
	}
	start := func() (string, func(), error) { return startKeydeck(bin, redisAddr, poll) }
	if fv.on {
		if err := fv.measure(start); err != nil {
			return err
		}
	}
	if !viewers {
		return nil
	}
	httpAddr, stop, err := start()
	if err != nil {
		return err
	}
	defer stop()
	stats := redis.NewClient(&redis.Options{Addr: redisAddr})
	defer stats.Close()
	ctx := context.Background()
	wsu := "ws://" + httpAddr + route.LiveURL(handlers.OpsTopic{Kind: "limits", Conn: "bench"}.String())
	hdr := http.Header{"Origin": {"http://" + httpAddr}}

	fmt.Printf("Keydeck Rate limits benchmark: %s per run, poll interval %s, loopback, %d CPUs\n\n", dur, poll, numCPU())
	// The first viewer starts the sweep: how long until a throttled row shows.
	first, _, err := websocket.DefaultDialer.Dial(wsu, hdr)
	if err != nil {
		return err
	}
	t1 := time.Now()
	var firstThrottled time.Duration
	for {
		_ = first.SetReadDeadline(time.Now().Add(2 * time.Minute))
		_, msg, err := first.ReadMessage()
		if err != nil {
			return fmt.Errorf("first viewer: %w", err)
		}
		if strings.Contains(string(msg), `data-throttled="true"`) {
			firstThrottled = time.Since(t1)
			break
		}
	}
	first.Close()
	fmt.Printf("time until the first throttled row shows (sweep started by that viewer): %s\n", firstThrottled.Round(time.Millisecond))

	type result struct {
		viewers    int
		cmdsPerSec float64
		byCmd      map[string]float64
		frames     int64
		slowest    string
	}
	var results []result
	for _, s := range strings.Split(counts, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 || n > 5000 {
			return fmt.Errorf("bad viewer count %q (1–5000)", s)
		}
		conns := make([]*websocket.Conn, n)
		for i := range conns {
			if conns[i], _, err = websocket.DefaultDialer.Dial(wsu, hdr); err != nil {
				return fmt.Errorf("viewer %d: %w", i, err)
			}
		}
		var frames atomic.Int64
		var wg sync.WaitGroup
		for _, c := range conns {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					if _, _, err := c.ReadMessage(); err != nil {
						return
					}
					frames.Add(1)
				}
			}()
		}
		time.Sleep(2 * time.Second) // every viewer has its first frame
		if err := stats.ConfigSet(ctx, "slowlog-log-slower-than", "0").Err(); err != nil {
			return err
		}
		if err := stats.ConfigSet(ctx, "slowlog-max-len", "1000000").Err(); err != nil {
			return err
		}
		stats.SlowLogReset(ctx)
		before, err := commandCalls(ctx, stats)
		if err != nil {
			return err
		}
		f0 := frames.Load()
		t0 := time.Now()
		time.Sleep(dur)
		after, err := commandCalls(ctx, stats)
		if err != nil {
			return err
		}
		elapsed := time.Since(t0)
		r := result{viewers: n, byCmd: map[string]float64{}, frames: frames.Load() - f0}
		var total float64
		for cmd, a := range after {
			switch cmd {
			case "info", "slowlog", "config":
				continue // the bench's own
			}
			if d := float64(a - before[cmd]); d > 0 {
				r.byCmd[cmd] = d / elapsed.Seconds()
				total += d
			}
		}
		r.cmdsPerSec = total / elapsed.Seconds()
		r.slowest = slowest(ctx, stats)
		stats.ConfigSet(ctx, "slowlog-log-slower-than", "10000")
		for _, c := range conns {
			c.Close()
		}
		wg.Wait()
		results = append(results, r)
		fmt.Printf("viewers=%-4d redis cmds/s=%8.1f  frames=%d  slowest: %s\n    by command: %s\n", r.viewers, r.cmdsPerSec, r.frames, r.slowest, fmtCmds(r.byCmd))
	}
	if len(results) > 1 && results[0].viewers == 1 {
		fmt.Println()
		for _, r := range results[1:] {
			fmt.Printf("cost ratio %d viewers / 1 viewer: %.3f× (target ≤ 1.1×)\n", r.viewers, r.cmdsPerSec/results[0].cmdsPerSec)
		}
	}
	return nil
}

// slowest is the longest entry of the slow log (every command is logged
// while a run is measured), the bench's own commands excluded.
func slowest(ctx context.Context, c *redis.Client) string {
	logs, err := c.SlowLogGet(ctx, -1).Result()
	if err != nil {
		return "SLOWLOG: " + err.Error()
	}
	var best redis.SlowLog
	var all []time.Duration
	for _, l := range logs {
		if len(l.Args) > 0 {
			switch strings.ToLower(l.Args[0]) {
			case "info", "slowlog", "config":
				continue
			}
		}
		all = append(all, l.Duration)
		if l.Duration > best.Duration {
			best = l
		}
	}
	if len(all) == 0 {
		return "no command logged"
	}
	slices.Sort(all)
	over := len(all) - sort.Search(len(all), func(i int) bool { return all[i] > 2*time.Millisecond })
	args := best.Args
	if len(args) > 6 {
		args = append(args[:6:6], "…")
	}
	return fmt.Sprintf("%s: %s — of %d commands: p50 %s, p99 %s, p99.9 %s, %d over 2ms",
		best.Duration, strings.Join(args, " "), len(all), all[len(all)/2], all[len(all)*99/100], all[len(all)*999/1000], over)
}

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// load writes the keys as eIsland does: slider buckets (HASH tokens, ts;
// 2% drained), login failure windows (ZSET of 1–5 failures scored in ms;
// 1% locked, with the lock holding its unlock time) and payment locks
// (SET NX PX with a UUID). TTLs outlast the bench.
func load(addr string, buckets, windows, locks int) error {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	now := time.Now()
	nowMs := strconv.FormatInt(now.UnixMilli(), 10)
	batch := func(db, n int, add func(p redis.Pipeliner, i int)) error {
		c := redis.NewClient(&redis.Options{Addr: addr, DB: db})
		defer c.Close()
		for lo := 0; lo < n; lo += 5000 {
			p := c.Pipeline()
			for i := lo; i < min(n, lo+5000); i++ {
				add(p, i)
			}
			if _, err := p.Exec(ctx); err != nil {
				return err
			}
		}
		return nil
	}
	if err := batch(4, buckets, func(p redis.Pipeliner, i int) {
		key := "verify:slider:rate:create:account:" + b64(fmt.Sprintf("user%06d@example.com", i))
		tokens := strconv.Itoa(1 + rng.IntN(12))
		if rng.IntN(50) == 0 {
			tokens = "0"
		}
		p.HSet(ctx, key, "tokens", tokens, "ts", nowMs)
		p.Expire(ctx, key, time.Hour)
	}); err != nil {
		return err
	}
	if err := batch(6, windows, func(p redis.Pipeliner, i int) {
		user := fmt.Sprintf("login%06d", i)
		key := "auth:limit:login:failures:" + user
		n := 1 + rng.IntN(4)
		locked := rng.IntN(100) == 0
		if locked {
			n = 5
		}
		for j := range n {
			ms := now.Add(-time.Duration(j+1) * time.Second).UnixMilli()
			p.ZAdd(ctx, key, redis.Z{Score: float64(ms), Member: fmt.Sprintf("%d:%d", ms, j)})
		}
		p.Expire(ctx, key, time.Hour)
		if locked {
			p.Set(ctx, "auth:limit:login:lock:"+user, strconv.FormatInt(now.Add(10*time.Minute).UnixMilli(), 10), time.Hour)
		}
	}); err != nil {
		return err
	}
	return batch(10, locks, func(p redis.Pipeliner, i int) {
		id := fmt.Sprintf("%08x-%04x-4%03x-a%03x-%012x", rng.Uint32(), rng.IntN(1<<16), rng.IntN(1<<12), rng.IntN(1<<12), rng.Uint64()&(1<<48-1))
		p.SetNX(ctx, fmt.Sprintf("payment:lock:create:pro-month:user%05d", i), id, time.Hour)
	})
}

// startKeydeck starts the keydeck binary on a free port against the
// bench's server and waits until it is ready.
func startKeydeck(bin, redisAddr string, poll time.Duration) (httpAddr string, stop func(), err error) {
	httpAddr = freeAddr()
	kd := exec.Command(bin, "--addr", httpAddr, "--redis", "bench=redis://"+redisAddr, "--pack-for", "bench=eisland", "--poll-interval", poll.String(), "--log-level", "warn")
	kd.Stderr = os.Stderr
	if err := kd.Start(); err != nil {
		return "", nil, err
	}
	stop = func() { _ = kd.Process.Kill(); _ = kd.Wait() }
	if err := waitHTTP("http://" + httpAddr + "/readyz"); err != nil {
		stop()
		return "", nil, err
	}
	return httpAddr, stop, nil
}

func commandCalls(ctx context.Context, c *redis.Client) (map[string]int64, error) {
	txt, err := c.Info(ctx, "commandstats").Result()
	if err != nil {
		return nil, err
	}
	return redistest.ParseCommandStats(txt), nil
}

func fmtCmds(m map[string]float64) string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%.1f", k, m[k]))
	}
	return strings.Join(parts, " ")
}

func freeAddr() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func waitHTTP(url string) error {
	for range 200 {
		res, err := http.Get(url)
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("keydeck did not become ready at %s", url)
}

func numCPU() int {
	b, _ := os.ReadFile("/proc/cpuinfo")
	return strings.Count(string(b), "processor\t:")
}
