// Command bench-viewers measures what live viewers cost: it starts a
// redis-server and the real keydeck binary on loopback, connects 1, 100 and
// 1,000 websocket viewers to the same overview for a fixed time each, writes
// to Redis about once a second at random offsets, and reports the Redis
// commands Keydeck issued per second (INFO commandstats deltas), Keydeck's
// resident memory, and the update latency from a write to each viewer's
// frame showing it.
//
//	go run ./cmd/bench-viewers [-duration 15s] [-viewers 1,100,1000]
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/handlers"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/internal/route"
)

func main() {
	dur := flag.Duration("duration", 15*time.Second, "measurement window per viewer count")
	counts := flag.String("viewers", "1,100,1000", "viewer counts to measure")
	poll := flag.Duration("poll-interval", time.Second, "Keydeck's poll interval")
	flag.BoolVar(&notify, "notify", false, "start redis-server with keyspace notifications on (notify-keyspace-events Kz)")
	flag.StringVar(&target, "target", "overview", "what viewers watch: overview, or leaderboard (1,000,000 members, 100 score updates/s)")
	flag.Parse()
	if target != "overview" && target != "leaderboard" {
		fmt.Fprintln(os.Stderr, "bench-viewers: -target is overview or leaderboard")
		os.Exit(2)
	}
	if err := bench(*dur, *counts, *poll); err != nil {
		fmt.Fprintln(os.Stderr, "bench-viewers:", err)
		os.Exit(1)
	}
}

// target is what the viewers watch; notify turns keyspace notifications on.
var (
	target string
	notify bool
)

const (
	lbKey     = "mg:score:leaderboard:bench"
	lbMembers = 1_000_000
	lbProbe   = 1_000_000_000 // probe scores start here, above every other
)

// runBase separates the probes of successive runs: a new viewer may first
// receive the previous run's last frame, which must not count.
var runBase int64

type result struct {
	viewers     int
	cmdsPerSec  float64
	byCmd       map[string]float64
	rssKiB      int64
	p50, p99    time.Duration
	samples     int
	missed      int
	frames      int64
	connectTime time.Duration
}

func bench(dur time.Duration, counts string, poll time.Duration) error {
	tmp, err := os.MkdirTemp("", "keydeck-bench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	var extra []string
	if notify {
		extra = []string{"--notify-keyspace-events", "Kz"}
	}
	redisAddr, stopRedis, err := redistest.Launch(tmp, extra...)
	if err != nil {
		return err
	}
	defer stopRedis()

	bin := filepath.Join(tmp, "keydeck")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/web").CombinedOutput(); err != nil {
		return fmt.Errorf("build keydeck: %v\n%s", err, out)
	}
	httpAddr := freeAddr()
	if target == "leaderboard" {
		if err := loadLeaderboard(redisAddr); err != nil {
			return err
		}
	}
	kd := exec.Command(bin, "--addr", httpAddr, "--redis", "bench=redis://"+redisAddr, "--pack-for", "bench=eisland", "--poll-interval", poll.String(), "--log-level", "warn")
	kd.Stderr = os.Stderr
	if err := kd.Start(); err != nil {
		return err
	}
	defer func() { _ = kd.Process.Kill(); _ = kd.Wait() }()
	if err := waitHTTP("http://" + httpAddr + "/readyz"); err != nil {
		return err
	}

	writerDB := 1
	if target == "leaderboard" {
		writerDB = 14
	}
	writer := redis.NewClient(&redis.Options{Addr: redisAddr, DB: writerDB})
	defer writer.Close()
	stats := redis.NewClient(&redis.Options{Addr: redisAddr})
	defer stats.Close()

	fmt.Printf("Keydeck viewers benchmark (%s, keyspace notifications %v): %s per run, poll interval %s, loopback, %d CPUs\n\n", target, notify, dur, poll, numCPU())
	var results []result
	for _, s := range strings.Split(counts, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 || n > 5000 {
			return fmt.Errorf("bad viewer count %q (1–5000)", s)
		}
		r, err := runOnce(n, dur, poll, httpAddr, writer, stats, kd.Process.Pid)
		if err != nil {
			return err
		}
		results = append(results, r)
		fmt.Printf("viewers=%-5d redis cmds/s=%6.2f  rss=%6.1f MiB  latency p50=%4dms p99=%4dms (%d samples, %d missed)  frames=%d  connect=%s  by command: %s\n",
			r.viewers, r.cmdsPerSec, float64(r.rssKiB)/1024, r.p50.Milliseconds(), r.p99.Milliseconds(), r.samples, r.missed, r.frames, r.connectTime.Round(time.Millisecond), fmtCmds(r.byCmd))
	}
	if len(results) > 1 && results[0].viewers == 1 {
		base := results[0].cmdsPerSec
		fmt.Println()
		for _, r := range results[1:] {
			fmt.Printf("cost ratio %d viewers / 1 viewer: %.3f× (target ≤ 1.1×)\n", r.viewers, r.cmdsPerSec/base)
		}
	}
	return nil
}

var keysRe = regexp.MustCompile(`data-testid="db-1"[\s\S]*?data-testid="keys">([0-9,]+)<`)

func runOnce(n int, dur, poll time.Duration, httpAddr string, writer, stats *redis.Client, pid int) (result, error) {
	ctx := context.Background()
	res := result{viewers: n}
	// Start each run from a clean state so counts map to write times.
	if target == "overview" {
		// Keys accumulate across runs; counts above this run's start are its writes.
		n, err := writer.DBSize(ctx).Result()
		if err != nil {
			return res, err
		}
		runBase = n
	} else {
		runBase += 1_000_000
		if err := writer.ZRemRangeByScore(ctx, lbKey, strconv.Itoa(lbProbe), "+inf").Err(); err != nil {
			return res, err
		}
	}
	var (
		mu      sync.Mutex
		written = map[int64]time.Time{} // key count → when the write made it so
		lat     []time.Duration
		seen    = make([]int64, n)
		frames  int64
	)
	var topic handlers.Topic = handlers.OverviewTopic{Conn: "bench"}
	if target == "leaderboard" {
		topic = handlers.LeaderboardTopic{Window: route.Window{Conn: "bench", DB: 14, Key: lbKey, N: route.DefaultRows}}
	}
	wsu := "ws://" + httpAddr + route.LiveURL(topic.String())
	hdr := http.Header{"Origin": {"http://" + httpAddr}}
	conns := make([]*websocket.Conn, n)
	start := time.Now()
	for i := range conns {
		c, _, err := websocket.DefaultDialer.Dial(wsu, hdr)
		if err != nil {
			return res, fmt.Errorf("viewer %d: %w", i, err)
		}
		conns[i] = c
	}
	res.connectTime = time.Since(start)
	var wg sync.WaitGroup
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				_, msg, err := c.ReadMessage()
				if err != nil {
					return
				}
				now := time.Now()
				cnt := frameCount(msg)
				mu.Lock()
				frames++
				// Every write this frame reflects for the first time is a latency sample.
				for k := seen[i] + 1; k <= cnt; k++ {
					if at, ok := written[k]; ok {
						lat = append(lat, now.Sub(at))
					}
				}
				if cnt > seen[i] {
					seen[i] = cnt
				}
				mu.Unlock()
			}
		}()
	}
	time.Sleep(2 * time.Second) // let every viewer get its first frame

	stopUpdates := make(chan struct{})
	updatesDone := make(chan struct{})
	go func() { defer close(updatesDone); scoreUpdates(ctx, writer, stopUpdates) }()
	defer func() { close(stopUpdates); <-updatesDone }()
	before, err := commandCalls(ctx, stats)
	if err != nil {
		return res, err
	}
	t0 := time.Now()
	var writes int64
	// Writes come at random offsets so they sample every phase of the poll
	// cycle instead of locking onto one.
	rng := rand.New(rand.NewPCG(uint64(n), 42))
	for time.Since(t0) < dur {
		time.Sleep(500*time.Millisecond + time.Duration(rng.Int64N(int64(time.Second))))
		writes++
		mu.Lock()
		written[writes] = time.Now()
		mu.Unlock()
		if err := write(ctx, writer, writes); err != nil {
			return res, err
		}
	}
	elapsed := time.Since(t0)
	after, err := commandCalls(ctx, stats)
	if err != nil {
		return res, err
	}
	time.Sleep(2 * poll) // let the last write arrive
	res.rssKiB = rss(pid)
	for _, c := range conns {
		c.Close()
	}
	wg.Wait()

	// The bench's own commands: its writes, the background score updates,
	// and the first INFO snapshot.
	res.byCmd = map[string]float64{}
	var total float64
	for cmd, a := range after {
		d := float64(a - before[cmd])
		switch cmd {
		case "set":
			if target == "overview" {
				d -= float64(writes)
			}
		case "zadd":
			if target == "leaderboard" {
				continue
			}
		case "info":
			d--
		}
		if d > 0 {
			res.byCmd[cmd] = d / elapsed.Seconds()
			total += d
		}
	}
	res.cmdsPerSec = total / elapsed.Seconds()
	mu.Lock()
	defer mu.Unlock()
	res.frames = frames
	res.samples = len(lat)
	res.missed = int(writes)*n - len(lat)
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	if len(lat) > 0 {
		res.p50 = lat[len(lat)/2]
		res.p99 = lat[min(len(lat)-1, len(lat)*99/100)]
	}
	return res, nil
}

// write makes the change viewers must see: overview — one more key in DB 1;
// leaderboard — a probe member with a new top score.
func write(ctx context.Context, c *redis.Client, n int64) error {
	if target == "overview" {
		return c.Set(ctx, fmt.Sprintf("k%d", runBase+n), "v", 0).Err()
	}
	return c.ZAdd(ctx, lbKey, redis.Z{Score: float64(lbProbe + runBase + n), Member: fmt.Sprintf("probe-%d", n)}).Err()
}

var topScoreRe = regexp.MustCompile(`data-testid="lb-score">([0-9,.]+)<`)

// frameCount reads which write a frame reflects.
func frameCount(msg []byte) int64 {
	if target == "overview" {
		if m := keysRe.FindSubmatch(msg); m != nil {
			n, _ := strconv.ParseInt(strings.ReplaceAll(string(m[1]), ",", ""), 10, 64)
			return max(0, n-runBase)
		}
		return 0
	}
	if m := topScoreRe.FindSubmatch(msg); m != nil {
		n, _ := strconv.ParseInt(strings.ReplaceAll(string(m[1]), ",", ""), 10, 64)
		if n > lbProbe+runBase {
			return n - lbProbe - runBase
		}
	}
	return 0
}

// scoreUpdates keeps the leaderboard busy: 100 ZADDs a second of random
// members with scores below every probe.
func scoreUpdates(ctx context.Context, c *redis.Client, stop <-chan struct{}) {
	if target != "leaderboard" {
		return
	}
	// A new sequence each run: rewriting a score a member already has
	// changes nothing, and Redis sends no notification for it.
	rng := rand.New(rand.NewPCG(uint64(runBase), 7))
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			c.ZAdd(ctx, lbKey, redis.Z{Score: float64(rng.IntN(lbProbe)), Member: fmt.Sprintf("user%d", rng.IntN(lbMembers))})
		}
	}
}

// loadLeaderboard writes the 1,000,000-member leaderboard with metadata
// for its top 1,000 members.
func loadLeaderboard(addr string) error {
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: addr, DB: 14})
	defer c.Close()
	t0 := time.Now()
	zs := make([]redis.Z, 0, 10000)
	for i := range lbMembers {
		zs = append(zs, redis.Z{Score: float64(lbMembers - i), Member: fmt.Sprintf("user%d", i)})
		if len(zs) == cap(zs) {
			if err := c.ZAdd(ctx, lbKey, zs...).Err(); err != nil {
				return err
			}
			zs = zs[:0]
		}
	}
	p := c.Pipeline()
	for i := range 1000 {
		p.HSet(ctx, fmt.Sprintf("mg:score:user-meta:bench:user%d", i), "score", lbMembers-i, "durationMs", 60000+i, "moves", 300+i, "achievedAt", time.Now().UnixMilli())
	}
	if _, err := p.Exec(ctx); err != nil {
		return err
	}
	fmt.Printf("loaded a %d-member leaderboard in %s\n", lbMembers, time.Since(t0).Round(time.Millisecond))
	return nil
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
		parts = append(parts, fmt.Sprintf("%s=%.2f", k, m[k]))
	}
	return strings.Join(parts, " ")
}

func rss(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			f := strings.Fields(line)
			if len(f) >= 2 {
				n, _ := strconv.ParseInt(f[1], 10, 64)
				return n
			}
		}
	}
	return 0
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
	for i := 0; i < 200; i++ {
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
