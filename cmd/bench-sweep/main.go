// Command bench-sweep measures the statistics sweep on a real redis-server
// holding 1,000,000 keys in eIsland's mini-game families (database 14): time
// to the first estimate, per-family count error against the truth after 10%
// of the keys and after a full pass, the pass's total time, the Redis
// commands per second it issued, and the slowest Keydeck command in SLOWLOG
// (logged from 1 ms; the target is none over 10 ms).
//
//	go run ./cmd/bench-sweep [-keys 1000000] [-rate 50000] [-count 200]
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"math"
	"os"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

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

func main() {
	keys := flag.Int("keys", 1_000_000, "keys to load")
	rate := flag.Int("rate", 50_000, "sweep budget, keys per second")
	count := flag.Int("count", 200, "SCAN COUNT per sweep step")
	flag.Parse()
	if err := bench(*keys, stats.SweepBudget{KeysPerSec: *rate, Count: *count}); err != nil {
		fmt.Fprintln(os.Stderr, "bench-sweep:", err)
		os.Exit(1)
	}
}

func bench(n int, budget stats.SweepBudget) error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "keydeck-bench-sweep")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	addr, stop, err := redistest.Launch(dir, "--slowlog-log-slower-than", "1000", "--slowlog-max-len", "1024")
	if err != nil {
		return err
	}
	defer stop()
	c := redis.NewClient(&redis.Options{Addr: addr, DB: db})
	defer c.Close()

	t0 := time.Now()
	truth, err := load(ctx, c, n)
	if err != nil {
		return err
	}
	fmt.Printf("loaded %d keys into db%d in %s\n", n, db, time.Since(t0).Round(time.Millisecond))
	admin := redis.NewClient(&redis.Options{Addr: addr})
	defer admin.Close()
	admin.ConfigResetStat(ctx)
	admin.Do(ctx, "SLOWLOG", "RESET")

	log := slog.New(slog.DiscardHandler)
	conn, err := redisview.Open(redisview.ConnConfig{Name: "bench", URL: "redis://" + addr}, log)
	if err != nil {
		return err
	}
	defer conn.Close()
	conn.ForcePack(schema.BuiltinPack("eisland"))
	sctx, cancel := context.WithCancel(ctx)
	pool := stats.NewSweepers(sctx, budget, time.Minute, log)
	defer func() { cancel(); pool.Wait() }()

	start := time.Now()
	s, release := pool.Acquire(conn, db)
	defer release()
	var firstAt, tenthAt, doneAt time.Duration
	var tenth, full stats.DBDetail
	for {
		d := s.Detail(stats.TotalKeys(ctx, conn, db))
		el := time.Since(start)
		if firstAt == 0 && (d.Seen > 0 || d.Pass > 0) {
			firstAt = el
		}
		if tenthAt == 0 && d.Pass == 0 && d.Seen >= int64(n)/10 {
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
	stats, err := commandCalls(ctx, admin)
	if err != nil {
		return err
	}
	var calls int64
	for cmd, v := range stats {
		if cmd != "info" && cmd != "slowlog" && cmd != "config|resetstat" {
			calls += v
		}
	}
	slowMax, slowKeydeck, slowN, slowCmd, err := slowlog(ctx, admin)
	if err != nil {
		return err
	}

	fmt.Printf("sweep budget %d keys/s, SCAN COUNT %d\n", budget.KeysPerSec, budget.Count)
	fmt.Printf("time to first estimate:   %s (target ≤ 2s)\n", firstAt.Round(time.Millisecond))
	fmt.Printf("time to 10%% of keys:      %s (estimated from %.1f%%)\n", tenthAt.Round(time.Millisecond), tenth.Coverage*100)
	fmt.Printf("full pass:                %s (%.0f keys/s)\n", doneAt.Round(time.Millisecond), float64(n)/doneAt.Seconds())
	fmt.Printf("redis commands issued:    %d (%.0f/s during the pass)\n", calls, float64(calls)/doneAt.Seconds())
	fmt.Printf("slowlog entries ≥1ms:     %d; slowest overall %s, slowest keydeck command %s %.60s (target: none over 10ms)\n", slowN, slowMax, slowKeydeck, slowCmd)
	fmt.Println()
	fmt.Printf("%-26s %10s %12s %8s %12s %8s\n", "family", "truth", "at 10%", "error", "full pass", "error")
	worst10 := 0.0
	for _, m := range mix {
		want := truth[m.family]
		a, b := count(tenth, m.family), count(full, m.family)
		e10, eFull := relErr(a, want), relErr(b, want)
		if want >= int64(n)/100 {
			worst10 = math.Max(worst10, math.Abs(e10))
		}
		fmt.Printf("%-26s %10d %12d %+7.2f%% %12d %+7.2f%%\n", m.family, want, a, e10, b, eFull)
	}
	fmt.Printf("\nworst error at 10%% among families holding ≥1%% of keys: %.2f%% (target ≤ 5%%)\n", worst10)
	return nil
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

func slowlog(ctx context.Context, c *redis.Client) (overall, keydeck time.Duration, n int, slowest string, err error) {
	logs, err := c.SlowLogGet(ctx, 1024).Result()
	if err != nil {
		return 0, 0, 0, "", err
	}
	for _, l := range logs {
		if len(l.Args) > 0 && (l.Args[0] == "SLOWLOG" || l.Args[0] == "slowlog") {
			continue
		}
		n++
		overall = max(overall, l.Duration)
		if l.ClientName == "keydeck" && l.Duration > keydeck {
			keydeck = l.Duration
			slowest = fmt.Sprint(l.Args)
		}
	}
	return overall, keydeck, n, slowest, nil
}

func commandCalls(ctx context.Context, c *redis.Client) (map[string]int64, error) {
	txt, err := c.Info(ctx, "commandstats").Result()
	if err != nil {
		return nil, err
	}
	return redistest.ParseCommandStats(txt), nil
}
