// Command bench-sweep measures the statistics sweep on a real redis-server
// holding 1,000,000 keys in eIsland's mini-game families (database 14) plus
// a few huge keys (a 1,000,000-field hash in hashtable encoding, a
// 1,000,000-member zset and set, a 1,000,000-item list, a 100 MB string),
// once per read path: the pipelines (the default: SCAN, then pipelined
// TYPE/PTTL/MEMORY USAGE and lengths) and the sweep script (one read-only
// script per SCAN page, stats.SweepBudget.Script).
//
// For each path it reports:
//
//   - at the default budget (2,000 keys/s), over a window of -window: the
//     Redis CPU the sweep costs (INFO cpu used_cpu_sys+used_cpu_user delta
//     over wall time, in % of one core, less an idle baseline measured the
//     same way before), and the commands per key (INFO commandstats delta
//     over the keys read: those Keydeck sends, and those Redis executes,
//     a script's inner calls included);
//
//   - at -rate: time to the first estimate, per-family count error after
//     10% of the keys and after a full pass, the time of the pass;
//
//   - the slowest command in SLOWLOG over both (every command over
//     -slowlog µs is logged; the target is none over 2 ms);
//
//   - after the pass, over -idle with the sweeper still watching the
//     unchanged database: whether a new pass ran, and its CPU.
//
//     go run ./cmd/bench-sweep [-keys 1000000] [-rate 50000] [-count 200] [-window 60s] [-idle 20s]
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/benchkit"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/redisview/stats"
)

const db = 14

// mix is the share of keys per family; the truth is known by construction.
var mix = []struct {
	family string
	share  float64
}{
	{"mg-idempotency", 0.30},
	{"mg-consume-idempotency", 0.20},
	{"mg-score-high", 0.20},
	{"mg-user-meta", 0.20},
	{"mg-session", 0.0999},
	{"mg-leaderboard", 0.0001},
}

type options struct {
	keys          int
	budget        stats.SweepBudget
	window, idle  time.Duration
	slowlogMicros int
	paths         string
}

func main() {
	var o options
	flag.IntVar(&o.keys, "keys", 1_000_000, "keys to load (plus the huge keys)")
	rate := flag.Int("rate", 50_000, "sweep budget of the full pass, keys per second")
	count := flag.Int("count", 200, "SCAN COUNT per sweep step")
	flag.DurationVar(&o.window, "window", 60*time.Second, "CPU window at the default budget")
	flag.DurationVar(&o.idle, "idle", 20*time.Second, "idle baseline, and the unchanged-database window")
	flag.IntVar(&o.slowlogMicros, "slowlog", 100, "SLOWLOG logs commands slower than this many µs")
	flag.StringVar(&o.paths, "paths", "script,pipelines", "read paths to measure, in this order")
	flag.Parse()
	o.budget = stats.SweepBudget{KeysPerSec: *rate, Count: *count}
	if err := bench(o); err != nil {
		fmt.Fprintln(os.Stderr, "bench-sweep:", err)
		os.Exit(1)
	}
}

func bench(o options) error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "keydeck-bench-sweep")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	addr, stop, err := redistest.Launch(dir, "--slowlog-log-slower-than", strconv.Itoa(o.slowlogMicros), "--slowlog-max-len", "100000")
	if err != nil {
		return err
	}
	defer stop()
	c := redis.NewClient(&redis.Options{Addr: addr, DB: db})
	defer c.Close()

	t0 := time.Now()
	truth, err := load(ctx, c, o.keys)
	if err != nil {
		return err
	}
	if err := loadHuge(ctx, c); err != nil {
		return err
	}
	fmt.Printf("loaded %d keys and %d huge keys into db%d in %s\n", o.keys, len(huge), db, time.Since(t0).Round(time.Millisecond))
	admin := redis.NewClient(&redis.Options{Addr: addr})
	defer admin.Close()
	if err := probeHuge(ctx, admin); err != nil {
		return err
	}
	urls := map[string]string{"script": "redis://" + addr, "pipelines": "redis://" + addr}
	for _, name := range strings.Split(o.paths, ",") {
		path := struct{ name, url string }{name, urls[name]}
		if path.url == "" {
			return fmt.Errorf("-paths: %q is neither script nor pipelines", name)
		}
		fmt.Printf("\n=== read path: %s ===\n", path.name)
		if err := benchPath(ctx, o, admin, path.url, path.name == "script", truth); err != nil {
			return err
		}
	}
	return nil
}

// sent are the commands Keydeck sends itself; the others a script calls.
var sent = map[string]bool{"evalsha_ro": true, "eval_ro": true, "evalsha": true, "eval": true, "scan": true, "info": true}

// callsPerKey splits a commandstats delta into the commands Keydeck sent
// and all that Redis executed (a script's inner calls included), over the
// keys read. The pipeline path sends every command itself.
func callsPerKey(before, after map[string]int64, keys int64, script bool) (sentPerKey, execPerKey float64) {
	var s, e int64
	for cmd, v := range after {
		d := v - before[cmd]
		if d <= 0 || cmd == "slowlog|get" || cmd == "slowlog|reset" || cmd == "config|resetstat" || cmd == "acl|setuser" {
			continue
		}
		e += d
		if !script || sent[cmd] {
			s += d
		}
	}
	k := float64(max(keys, 1))
	return float64(s) / k, float64(e) / k
}

func benchPath(ctx context.Context, o options, admin *redis.Client, url string, script bool, truth map[string]int64) error {
	log := slog.New(slog.DiscardHandler)
	conn, err := redisview.Open(redisview.ConnConfig{Name: "bench", URL: url}, log)
	if err != nil {
		return err
	}
	defer conn.Close()
	conn.ForcePack(schema.BuiltinPack("eisland"))
	admin.Do(ctx, "SLOWLOG", "RESET")
	admin.ConfigResetStat(ctx)

	// Idle baseline: the server with its data and no sweep.
	idle, err := benchkit.CPUOver(ctx, admin, o.idle)
	if err != nil {
		return err
	}

	// The default budget, over a window.
	def := stats.DefaultSweepBudget
	sctx, cancel := context.WithCancel(ctx)
	pool := stats.NewSweepers(sctx, def, time.Minute, log)
	s, release := pool.Acquire(conn, db)
	time.Sleep(2 * time.Second) // past the first steps
	cs0, err := commandCalls(ctx, admin)
	if err != nil {
		return err
	}
	seen0 := s.Detail(stats.TotalKeys(ctx, conn, db)).Seen
	busy, err := benchkit.CPUOver(ctx, admin, o.window)
	if err != nil {
		return err
	}
	d := s.Detail(stats.TotalKeys(ctx, conn, db))
	cs1, err := commandCalls(ctx, admin)
	if err != nil {
		return err
	}
	release()
	cancel()
	pool.Wait()
	read := d.Seen - seen0
	sentK, execK := callsPerKey(cs0, cs1, read, script)
	fmt.Printf("read path reported:       %s\n", d.ReadPath)
	fmt.Printf("default budget %d keys/s: %d keys read in %s (%.0f keys/s); one pass of %d keys takes %s at this rate\n",
		def.KeysPerSec, read, o.window, float64(read)/o.window.Seconds(), d.TotalKeys.V,
		(time.Duration(float64(d.TotalKeys.V)/(float64(read)/o.window.Seconds())) * time.Second).Round(time.Second))
	fmt.Printf("redis CPU:                %.2f%% of a core sweeping, %.2f%% idle baseline → sweep costs %.2f%% (target ≤ 1%%)\n", busy, idle, busy-idle)
	fmt.Printf("commands per key:         %.2f sent by Keydeck, %.2f executed by Redis (script calls included)\n", sentK, execK)

	// A full pass at the bench rate: accuracy, pass time.
	sctx, cancel = context.WithCancel(ctx)
	budget := o.budget
	pool = stats.NewSweepers(sctx, budget, time.Minute, log)
	defer func() { cancel(); pool.Wait() }()
	start := time.Now()
	s, release = pool.Acquire(conn, db)
	defer release()
	n := int64(0)
	for _, v := range truth {
		n += v
	}
	var firstAt, tenthAt, doneAt time.Duration
	var tenth, full stats.DBDetail
	for {
		d := s.Detail(stats.TotalKeys(ctx, conn, db))
		el := time.Since(start)
		if firstAt == 0 && (d.Seen > 0 || d.Pass > 0) {
			firstAt = el
		}
		if tenthAt == 0 && d.Pass == 0 && d.Seen >= n/10 {
			tenthAt, tenth = el, d
		}
		if d.Pass >= 1 {
			doneAt, full = el, d
			break
		}
		if el > 30*time.Minute {
			return fmt.Errorf("no full pass after %s (seen %d)", el, d.Seen)
		}
		time.Sleep(10 * time.Millisecond)
	}
	fmt.Printf("sweep budget %d keys/s, SCAN COUNT %d\n", o.budget.KeysPerSec, o.budget.Count)
	fmt.Printf("time to first estimate:   %s (target ≤ 2s)\n", firstAt.Round(time.Millisecond))
	fmt.Printf("time to 10%% of keys:      %s (estimated from %.1f%%)\n", tenthAt.Round(time.Millisecond), tenth.Coverage*100)
	fmt.Printf("full pass:                %s (%.0f keys/s)\n", doneAt.Round(time.Millisecond), float64(full.TotalKeys.V)/doneAt.Seconds())
	fmt.Printf("memory: %d keys' memory sampled (estimates), biggest by memory %s\n", full.MemoryEstimated, biggest(full))

	sl, err := slowlog(ctx, admin)
	if err != nil {
		return err
	}
	fmt.Printf("slowlog (both runs, >%dµs): %d entries; slowest keydeck command %s %.100s; %d keydeck commands over 2ms (target: none)\n",
		o.slowlogMicros, sl.n, sl.keydeck, sl.slowest, sl.over2ms)
	if lat, err := latency(ctx, admin); err == nil {
		fmt.Printf("latency (INFO latencystats, both runs): %s\n", lat)
	}
	fmt.Printf("noise floor:              slowest O(1) command %s %.80s (only the scheduler makes those slow)\n", sl.noise, sl.noiseCmd)

	// The database does not change: the sweeper keeps watching it and no
	// new pass runs.
	cs0, _ = commandCalls(ctx, admin)
	still, err := benchkit.CPUOver(ctx, admin, o.idle)
	if err != nil {
		return err
	}
	cs1, _ = commandCalls(ctx, admin)
	after := s.Detail(stats.TotalKeys(ctx, conn, db))
	var reads int64
	for _, cmd := range []string{"scan", "evalsha_ro", "evalsha", "type"} {
		reads += cs1[cmd] - cs0[cmd]
	}
	unchanged := "no"
	if !after.UnchangedSince.IsZero() {
		unchanged = "since " + after.UnchangedSince.Format(time.TimeOnly)
	}
	fmt.Printf("unchanged database, %s:  passes %d → %d, reads %d, unchanged %s, redis CPU %.2f%% (idle %.2f%%)\n",
		o.idle, full.Pass, after.Pass, reads, unchanged, still, idle)

	fmt.Println()
	fmt.Printf("%-26s %10s %12s %8s %12s %8s\n", "family", "truth", "at 10%", "error", "full pass", "error")
	worst10 := 0.0
	for _, m := range mix {
		want := truth[m.family]
		a, b := count(tenth, m.family), count(full, m.family)
		e10, eFull := relErr(a, want), relErr(b, want)
		if want >= n/100 {
			worst10 = math.Max(worst10, math.Abs(e10))
		}
		fmt.Printf("%-26s %10d %12d %+7.2f%% %12d %+7.2f%%\n", m.family, want, a, e10, b, eFull)
	}
	fmt.Printf("\nworst error at 10%% among families holding ≥1%% of keys: %.2f%% (target ≤ 5%%)\n", worst10)
	return nil
}

func biggest(d stats.DBDetail) string {
	var parts []string
	for i, b := range d.ByMemory {
		if i == 5 {
			break
		}
		est := ""
		if b.MemoryEstimated {
			est = "≈"
		}
		parts = append(parts, fmt.Sprintf("%s %s%d B", b.Key, est, b.Memory))
	}
	return strings.Join(parts, ", ")
}

// huge are the keys that test the 2 ms rule: a command reading one whole
// would take far longer.
var huge = []string{"huge:hash", "huge:zset", "huge:set", "huge:list", "huge:string"}

// loadHuge writes the huge keys: 1,000,000 fields, members or items each
// (hashtable, skiplist, hashtable and quicklist encodings) and a 100 MB string.
func loadHuge(ctx context.Context, c *redis.Client) error {
	const n, batch = 1_000_000, 1000
	for i := 0; i < n; i += batch {
		p := c.Pipeline()
		h := make([]any, 0, 2*batch)
		z := make([]redis.Z, 0, batch)
		m := make([]any, 0, batch)
		for j := i; j < i+batch; j++ {
			h = append(h, "field-"+strconv.Itoa(j), "value-"+strconv.Itoa(j))
			z = append(z, redis.Z{Score: float64(j), Member: "member-" + strconv.Itoa(j)})
			m = append(m, "item-"+strconv.Itoa(j))
		}
		p.HSet(ctx, "huge:hash", h...)
		p.ZAdd(ctx, "huge:zset", z...)
		p.SAdd(ctx, "huge:set", m...)
		p.RPush(ctx, "huge:list", m...)
		if _, err := p.Exec(ctx); err != nil {
			return err
		}
	}
	return c.SetRange(ctx, "huge:string", 100<<20-1, "x").Err()
}

func count(d stats.DBDetail, family string) int64 {
	for _, f := range d.Families {
		if f.Family.ID == family {
			return f.Count
		}
	}
	return 0
}

func relErr(got, want int64) float64 {
	if want == 0 {
		return 0
	}
	return float64(got-want) / float64(want) * 100
}

// load writes n keys in the mix through pipelines and returns the truth.
func load(ctx context.Context, c *redis.Client, n int) (map[string]int64, error) {
	truth := map[string]int64{}
	p := c.Pipeline()
	flush := func() error {
		if p.Len() == 0 {
			return nil
		}
		_, err := p.Exec(ctx)
		return err
	}
	i := 0
	for mi, m := range mix {
		k := int(math.Round(m.share * float64(n)))
		if mi == len(mix)-1 {
			k = n - i
		}
		for j := 0; j < k; j, i = j+1, i+1 {
			switch m.family {
			case "mg-idempotency":
				p.Set(ctx, fmt.Sprintf("mg:score:idempotency:%x-%d", i*2654435761, i), "1", 24*time.Hour)
			case "mg-consume-idempotency":
				p.Set(ctx, fmt.Sprintf("mg:score:consume:idempotency:%x-%d", i*2654435761, i), "1", 24*time.Hour)
			case "mg-score-high":
				p.Set(ctx, fmt.Sprintf("mg:score:high:%d:user%d", i%7, i), strconv.Itoa(i%100000), time.Hour)
			case "mg-user-meta":
				key := fmt.Sprintf("mg:score:user-meta:%d:user%d", i%7, i)
				p.HSet(ctx, key, "score", i%100000, "durationMs", 1000+i%9000, "moves", i%500, "achievedAt", 1764000000000+int64(i))
				p.Expire(ctx, key, time.Hour)
			case "mg-session":
				p.Set(ctx, fmt.Sprintf("mg:score:session:%d:user%d:s%d", i%7, i, i), fmt.Sprintf("%d:%d", i*31, 1764000000000+int64(i)), 6*time.Hour)
			case "mg-leaderboard":
				zs := make([]redis.Z, 200)
				for z := range zs {
					zs[z] = redis.Z{Score: float64(z * 10), Member: fmt.Sprintf("user%d", z)}
				}
				p.ZAdd(ctx, fmt.Sprintf("mg:score:leaderboard:game%d", j), zs...)
			}
			truth[m.family]++
			if p.Len() >= 5000 {
				if err := flush(); err != nil {
					return nil, err
				}
			}
		}
	}
	return truth, flush()
}

// latency reads the p50/p99/p99.9 of the sweep's commands (Redis 7).
func latency(ctx context.Context, c *redis.Client) (string, error) {
	txt, err := c.Info(ctx, "latencystats").Result()
	if err != nil {
		return "", err
	}
	var out []string
	for _, line := range strings.Split(txt, "\n") {
		name, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		cmd := strings.TrimPrefix(name, "latency_percentiles_usec_")
		if !ok || cmd == name {
			continue
		}
		switch cmd {
		case "evalsha_ro", "evalsha", "scan", "type", "pttl", "memory|usage", "strlen", "hlen":
			out = append(out, cmd+" "+v+" µs")
		}
	}
	return strings.Join(out, "; "), nil
}

// probeHuge times, on each huge key, the commands a sweep runs for it
// (TYPE, PTTL, its length, OBJECT ENCODING, MEMORY USAGE … SAMPLES 5, or
// SAMPLES 0 for the string, or for the big hash and set the random sample
// their memory is estimated from), seven times each with every command logged,
// and prints the median of each: the key's cost inside a sweep page,
// without the scheduler's noise.
func probeHuge(ctx context.Context, c *redis.Client) error {
	c14 := redis.NewClient(&redis.Options{Addr: c.Options().Addr, DB: db})
	defer c14.Close()
	was := c.ConfigGet(ctx, "slowlog-log-slower-than").Val()["slowlog-log-slower-than"]
	c.ConfigSet(ctx, "slowlog-log-slower-than", "0")
	defer c.ConfigSet(ctx, "slowlog-log-slower-than", was)
	lens := map[string]string{"huge:hash": "HLEN", "huge:zset": "ZCARD", "huge:set": "SCARD", "huge:list": "LLEN", "huge:string": "STRLEN"}
	fmt.Println("\nhuge keys: median server time of each command a sweep runs for them")
	for _, k := range huge {
		samples := "5"
		if k == "huge:string" {
			samples = "0"
		}
		cmds := [][]any{{"TYPE", k}, {"PTTL", k}, {lens[k], k}, {"OBJECT", "ENCODING", k}, {"MEMORY", "USAGE", k, "SAMPLES", samples}}
		switch k { // no MEMORY USAGE on big hash tables: a sample of lengths
		case "huge:hash":
			cmds[4] = []any{"HRANDFIELD", k, 16, "WITHVALUES"}
		case "huge:set":
			cmds[4] = []any{"SRANDMEMBER", k, 16}
		}
		c.Do(ctx, "SLOWLOG", "RESET")
		for range 7 {
			for _, a := range cmds {
				if err := c14.Do(ctx, a...).Err(); err != nil {
					return fmt.Errorf("%v: %w", a, err)
				}
			}
		}
		logs, err := c.SlowLogGet(ctx, 1000).Result()
		if err != nil {
			return err
		}
		by := map[string][]time.Duration{}
		for _, l := range logs {
			if len(l.Args) > 1 && !strings.EqualFold(l.Args[0], "slowlog") && !strings.EqualFold(l.Args[0], "config") {
				by[strings.ToUpper(l.Args[0])] = append(by[strings.ToUpper(l.Args[0])], l.Duration)
			}
		}
		var parts []string
		var total time.Duration
		for _, a := range cmds {
			name := strings.ToUpper(a[0].(string))
			d := by[name]
			slices.Sort(d)
			med := time.Duration(0)
			if len(d) > 0 {
				med = d[len(d)/2]
			}
			total += med
			label := fmt.Sprint(a[0])
			switch {
			case len(a) == 5:
				label += " … SAMPLES " + samples
			case len(a) == 3 && a[0] == "OBJECT":
				label += " " + fmt.Sprint(a[1])
			case len(a) >= 3:
				label += " … " + fmt.Sprint(a[2])
			}
			parts = append(parts, fmt.Sprintf("%s %dµs", label, med.Microseconds()))
		}
		fmt.Printf("  %-12s %s; together %dµs (target: a page under 2ms)\n", k, strings.Join(parts, ", "), total.Microseconds())
	}
	return nil
}

// slowStats sums SLOWLOG up: Keydeck's slowest command, how many of its
// commands took over 2 ms, and the slowest O(1) command (PTTL, TYPE, a
// length), which can only be slow when the machine took the CPU from
// redis-server mid-command: the noise floor of the figure.
type slowStats struct {
	n             int
	keydeck       time.Duration
	slowest       string
	over2ms       int
	noise         time.Duration
	noiseCmd      string
	scriptEntries int
}

var constantTime = map[string]bool{"pttl": true, "type": true, "strlen": true, "hlen": true, "llen": true, "scard": true, "zcard": true, "xlen": true}

func slowlog(ctx context.Context, c *redis.Client) (slowStats, error) {
	var st slowStats
	logs, err := c.SlowLogGet(ctx, 100000).Result()
	if err != nil {
		return st, err
	}
	for _, l := range logs {
		if len(l.Args) == 0 || strings.EqualFold(l.Args[0], "slowlog") {
			continue
		}
		st.n++
		cmd := strings.ToLower(l.Args[0])
		if constantTime[cmd] && l.Duration > st.noise {
			st.noise, st.noiseCmd = l.Duration, fmt.Sprint(l.Args)
		}
		if l.ClientName != "keydeck" {
			continue
		}
		if strings.HasPrefix(cmd, "eval") {
			st.scriptEntries++
		}
		if l.Duration > 2*time.Millisecond {
			st.over2ms++
		}
		if l.Duration > st.keydeck {
			st.keydeck, st.slowest = l.Duration, fmt.Sprint(l.Args)
		}
	}
	return st, nil
}

func commandCalls(ctx context.Context, c *redis.Client) (map[string]int64, error) {
	txt, err := c.Info(ctx, "commandstats").Result()
	if err != nil {
		return nil, err
	}
	return redistest.ParseCommandStats(txt), nil
}
