// Command bench-cluster measures Keydeck watching a Redis Cluster: three
// primaries on loopback (started here, stopped at the end) loaded with
// -keys keys shaped like the seeds — vertique Bucket4j buckets (one key,
// one slot each) and eIsland-style keys (slider, TOTP, login, feedback and
// mini-game keys, all in database 0: a cluster has no other) — written
// through pipelines. Then Keydeck's statistics sweep at the default
// budget, with the overview read every second as a watching page does:
//
//   - time to the first figures (the sweep's first keys) and to a complete
//     pass (bounded by -pass-timeout: past it the keys read so far and the
//     rate are reported);
//
//   - Redis CPU per node while watched: INFO cpu used_cpu_sys+used_cpu_user
//     over -window, in % of one core, less an idle baseline measured the
//     same way over -idle before (target ≤ 1% of a core per node);
//
//   - the slowest command each node logged (SLOWLOG, every command over
//     -slowlog µs) and the sweep's commands' latency percentiles.
//
//     go run ./cmd/bench-cluster [-keys 3000000] [-window 60s] [-idle 20s] [-pass-timeout 20m]
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/benchkit"
	"github.com/keydeck/keydeck/internal/demo"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/redisview/stats"
	"github.com/keydeck/keydeck/redisview/vertique"
)

type options struct {
	keys          int
	vertiqueShare float64
	window, idle  time.Duration
	passTimeout   time.Duration
	slowlogMicros int
}

func main() {
	var o options
	flag.IntVar(&o.keys, "keys", 3_000_000, "keys to load over the three primaries")
	flag.Float64Var(&o.vertiqueShare, "vertique", 0.5, "share of the keys that are vertique buckets (the rest eIsland-style)")
	flag.DurationVar(&o.window, "window", 60*time.Second, "CPU window while watched")
	flag.DurationVar(&o.idle, "idle", 20*time.Second, "idle baseline window")
	flag.DurationVar(&o.passTimeout, "pass-timeout", 20*time.Minute, "longest wait for a complete pass (the command is bounded)")
	flag.IntVar(&o.slowlogMicros, "slowlog", 100, "SLOWLOG logs commands slower than this many µs")
	flag.Parse()
	if err := bench(o); err != nil {
		fmt.Fprintln(os.Stderr, "bench-cluster:", err)
		os.Exit(1)
	}
}

func bench(o options) error {
	ctx := context.Background()
	t0 := time.Now()
	srv, err := benchkit.Start("bench-cluster", 3, "--slowlog-log-slower-than", strconv.Itoa(o.slowlogMicros), "--slowlog-max-len", "100000")
	if err != nil {
		return err
	}
	defer srv.Stop()
	addrs, nodes := srv.Addrs, srv.Nodes
	fmt.Printf("cluster of 3 primaries up in %s: %s\n", time.Since(t0).Round(time.Millisecond), strings.Join(addrs, " "))

	t0 = time.Now()
	nv, ne, err := load(ctx, addrs, o)
	if err != nil {
		return err
	}
	var sizes []string
	for i, n := range nodes {
		sz, err := n.DBSize(ctx).Result()
		if err != nil {
			return err
		}
		sizes = append(sizes, fmt.Sprintf("node %d: %d", i, sz))
	}
	fmt.Printf("loaded %d vertique buckets and %d eIsland-style keys in %s (%s)\n", nv, ne, time.Since(t0).Round(time.Millisecond), strings.Join(sizes, ", "))
	for _, n := range nodes {
		n.Do(ctx, "SLOWLOG", "RESET")
		n.ConfigResetStat(ctx)
	}

	idle, err := benchkit.CPUEach(ctx, nodes, o.idle)
	if err != nil {
		return err
	}
	fmt.Printf("idle baseline over %s:  %s\n", o.idle, pcts(idle))

	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	conn, err := redisview.Open(redisview.ConnConfig{Name: "bench", URL: srv.URL()}, log)
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := conn.Detect(ctx); err != nil {
		return err
	}
	if !conn.IsCluster() {
		return fmt.Errorf("the connection did not detect the cluster")
	}
	conn.ForcePack(schema.BuiltinPack("vertique"))

	// Watched: the overview read every second, and the sweep at the
	// default budget.
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	ov := stats.NewOverviewReader(conn)
	wg.Go(func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			ov.Read(wctx)
			select {
			case <-wctx.Done():
				return
			case <-t.C:
			}
		}
	})
	budget := stats.DefaultSweepBudget
	pool := stats.NewSweepers(wctx, budget, time.Minute, log)
	start := time.Now()
	s, release := pool.Acquire(conn, 0)
	defer func() { release(); cancel(); pool.Wait(); wg.Wait() }()
	detail := func() stats.DBDetail { return s.Detail(stats.TotalKeys(ctx, conn, 0)) }

	var first time.Duration
	for first == 0 {
		if d := detail(); d.Seen > 0 || d.Pass > 0 {
			first = time.Since(start)
			break
		}
		if time.Since(start) > time.Minute {
			return fmt.Errorf("no figures after a minute: %s", detail().Err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	fmt.Printf("time to first figures:    %s (sweep budget %d keys/s, SCAN COUNT %d)\n", first.Round(time.Millisecond), budget.KeysPerSec, budget.Count)

	seen0, w0 := detail().Seen, time.Now()
	busy, err := benchkit.CPUEach(ctx, nodes, o.window)
	if err != nil {
		return err
	}
	d := detail()
	rate := float64(d.Seen-seen0) / time.Since(w0).Seconds()
	fmt.Printf("watched over %s:       %s; less idle: %s (target ≤ 1%% of a core per node)\n", o.window, pcts(busy), pcts(minus(busy, idle)))
	fmt.Printf("sweep rate:               %.0f keys/s over the cluster (%d keys of %d read so far)\n", rate, d.Seen, d.TotalKeys.V)

	for {
		d = detail()
		if d.Pass >= 1 {
			fmt.Printf("complete pass:            %s after the sweep started (%d keys)\n", time.Since(start).Round(time.Second), d.TotalKeys.V)
			break
		}
		if el := time.Since(start); el > o.passTimeout {
			left := float64(d.TotalKeys.V-d.Seen) / max(rate, 1)
			fmt.Printf("complete pass:            not within -pass-timeout %s: %d of %d keys read; at %.0f keys/s the pass ends about %s after it started\n",
				o.passTimeout, d.Seen, d.TotalKeys.V, rate, (el + time.Duration(left*float64(time.Second))).Round(time.Second))
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if d.Err != "" {
		fmt.Printf("sweep error:              %v\n", d.Err)
	}
	for i, n := range nodes {
		sl, err := benchkit.Slowest(ctx, n)
		if err != nil {
			return err
		}
		fmt.Printf("node %d slowest (SLOWLOG > %dµs): %s\n", i, o.slowlogMicros, sl)
		if lat, err := benchkit.Latency(ctx, n, "scan", "type", "pttl", "memory|usage", "strlen", "hlen", "info", "cluster|slots"); err == nil && lat != "" {
			fmt.Printf("node %d latency:           %s\n", i, lat)
		}
	}
	return nil
}

// load writes o.keys keys through cluster pipelines of 10,000: a share of
// vertique buckets, the rest eIsland-style keys (benchkit.EislandShapes'
// writers, all in database 0).
func load(ctx context.Context, addrs []string, o options) (nv, ne int, err error) {
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
	defer cc.Close()
	f, err := vertique.Family(schema.BuiltinPack("vertique"))
	if err != nil {
		return 0, 0, err
	}
	state := demo.EncodeBucketState(demo.BucketState{Format: 1,
		Bandwidths: []demo.Bandwidth{{Capacity: 100, InitialTokens: 100, RefillPeriodNanos: int64(time.Minute), RefillTokens: 100, TimeOfFirstRefillMillis: demo.NotAligned}},
		States:     []demo.BandwidthState{{LastRefillNanos: time.Now().UnixNano(), Tokens: 42}}})
	secret := []byte("bench-cluster-secret")
	nv = int(o.vertiqueShare * float64(o.keys))
	p := cc.Pipeline()
	flush := func() error {
		if p.Len() < 10000 {
			return nil
		}
		_, err := p.Exec(ctx)
		return err
	}
	for i := range nv {
		k, err := vertique.Key(f, secret, "api-"+strconv.Itoa(i%20), "1", "caller-"+strconv.Itoa(i))
		if err != nil {
			return 0, 0, err
		}
		p.Set(ctx, k, state, 2*time.Hour)
		if err := flush(); err != nil {
			return 0, 0, err
		}
	}
	ne = o.keys - nv
	var total float64
	for _, s := range benchkit.EislandShapes {
		total += s.Share
	}
	i := 0
	for si, s := range benchkit.EislandShapes {
		k := int(s.Share / total * float64(ne))
		if si == len(benchkit.EislandShapes)-1 {
			k = ne - i
		}
		for j := 0; j < k; j, i = j+1, i+1 {
			s.Write(p, ctx, i)
			if err := flush(); err != nil {
				return 0, 0, err
			}
		}
	}
	if p.Len() > 0 {
		if _, err := p.Exec(ctx); err != nil {
			return 0, 0, err
		}
	}
	return nv, ne, nil
}

func minus(a, b []float64) []float64 {
	out := make([]float64, len(a))
	for i := range a {
		out[i] = a[i] - b[i]
	}
	return out
}

func pcts(v []float64) string {
	var parts []string
	for i, x := range v {
		parts = append(parts, fmt.Sprintf("node %d %.2f%%", i, x))
	}
	return strings.Join(parts, ", ")
}
