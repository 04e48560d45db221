// Command bench-search-budget measures what many live searches cost Redis
// under the connection's scan budget (redisview/scanbudget), on a real
// redis-server holding 1,000,000 keys shaped like the eIsland databases
// (internal/benchkit). It runs 64 concurrent searches as a live search
// page's topic runs them (search.Session stepped with search.LiveLimits,
// each step bounded by the hub's 1 s poll timeout, the hub's 200 ms gap
// between polls of one topic), each search an IP address whose scan walks
// the feedback counters of db8 (150,000 keys), in these cases:
//
//   - unpaced: no budget, as before issue 17.5;
//   - 1 user: all 64 searches by one identity, under the budget;
//   - 8 users: 8 searches by each of 8 identities, under the budget;
//   - the sweep: one statistics sweeper of db14 at its default budget,
//     for the comparison the default budget is chosen by.
//
// For each it reports, over at most -window: the Redis CPU (INFO cpu
// used_cpu_sys+used_cpu_user delta over wall time, % of one core; the
// idle server's is measured first), SCAN calls per second (INFO
// commandstats delta), keys scanned per second, and the time to finish
// every search: measured when they all finished within the window, else
// projected from the keys left at the measured rate. For the budgeted
// cases it also gives the share of the keys scanned by each identity.
//
//	go run ./cmd/bench-search-budget [-keys 1000000] [-rate 1600] [-window 30s]
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/benchkit"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/scanbudget"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/redisview/search"
	"github.com/keydeck/keydeck/redisview/stats"
)

type options struct {
	keys     int
	rate     int
	searches int
	window   time.Duration
	idle     time.Duration
}

func main() {
	var o options
	flag.IntVar(&o.keys, "keys", 1_000_000, "keys to load")
	flag.IntVar(&o.rate, "rate", stats.DefaultSweepBudget.KeysPerSec, "the scan budget, keys/s (default: the sweep's, as --search-rate)")
	flag.IntVar(&o.searches, "searches", 64, "concurrent searches")
	flag.DurationVar(&o.window, "window", 30*time.Second, "how long each case runs at most")
	flag.DurationVar(&o.idle, "idle", 5*time.Second, "how long the idle baseline is measured")
	flag.Parse()
	if err := bench(o); err != nil {
		fmt.Fprintln(os.Stderr, "bench-search-budget:", err)
		os.Exit(1)
	}
}

func bench(o options) error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "keydeck-bench-search-budget")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	addr, stop, err := redistest.Launch(dir)
	if err != nil {
		return err
	}
	defer stop()
	t0 := time.Now()
	if err := benchkit.LoadEisland(ctx, addr, o.keys); err != nil {
		return err
	}
	fmt.Printf("loaded %d keys (db4 15%%, db5 15%%, db6 15%%, db8 15%%, db14 40%%) in %s\n", o.keys, time.Since(t0).Round(time.Millisecond))
	admin := redis.NewClient(&redis.Options{Addr: addr})
	defer admin.Close()
	conn, err := redisview.Open(redisview.ConnConfig{Name: "bench", URL: "redis://" + addr}, slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}
	defer conn.Close()
	conn.ForcePack(schema.BuiltinPack("eisland"))

	idle, err := benchkit.CPUOver(ctx, admin, o.idle)
	if err != nil {
		return err
	}
	fmt.Printf("idle server: Redis CPU %.2f%% of a core (over %s)\n", idle, o.idle)
	fmt.Printf("%d searches of an IP address each (SCAN MATCH issue-feedback:submit:*:IP over db8's %d keys), stepped as a live topic; budget %d keys/s; window %s\n\n",
		o.searches, int(0.15*float64(o.keys)), o.rate, o.window)

	cases := []struct {
		name   string
		ids    int
		budget bool
	}{
		{"unpaced (no budget), 1 user", 1, false},
		{"budget, 1 user", 1, true},
		{"budget, 8 users", 8, true},
	}
	for _, c := range cases {
		var b *scanbudget.Budget
		if c.budget {
			b = scanbudget.New(float64(o.rate), nil)
		}
		if err := runCase(ctx, o, admin, conn, c.name, c.ids, b); err != nil {
			return err
		}
	}
	return sweepCase(ctx, o, admin, conn)
}

// state is one search's latest result.
type state struct {
	id   string
	res  search.Result
	done bool
	at   time.Duration // when it finished
}

func runCase(ctx context.Context, o options, admin *redis.Client, conn *redisview.Conn, name string, ids int, b *scanbudget.Budget) error {
	states := make([]state, o.searches)
	var mu sync.Mutex
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cpu0, err := benchkit.CPUSeconds(ctx, admin)
	if err != nil {
		return err
	}
	calls0, err := benchkit.Calls(ctx, admin)
	if err != nil {
		return err
	}
	start := time.Now()
	var wg sync.WaitGroup
	for i := range o.searches {
		id := fmt.Sprintf("user%d", i%ids)
		q := search.Parse(fmt.Sprintf("10.0.%d.%d", i/256, i%256), conn.Pack())
		lim := search.LiveLimits
		var pacer *scanbudget.Pacer
		if b != nil {
			pacer = b.Pacer(id) // as the search topic's source holds one
			lim.Budget = pacer
		}
		sess := search.NewSession(conn, q, lim)
		wg.Go(func() {
			defer pacer.Close()
			for cctx.Err() == nil && !sess.Done() {
				// A poll of the hub: at most its 1 s timeout.
				pctx, pcancel := context.WithTimeout(cctx, time.Second)
				r, err := sess.Step(pctx)
				pcancel()
				mu.Lock()
				states[i].id = id
				if err == nil {
					states[i].res = r
				}
				if sess.Done() && !states[i].done {
					states[i].done, states[i].at = true, time.Since(start)
				}
				mu.Unlock()
				// The hub's MinGap between two polls of one topic.
				select {
				case <-cctx.Done():
				case <-time.After(200 * time.Millisecond):
				}
			}
		})
	}
	// Until every search is done or the window ends.
	for time.Since(start) < o.window {
		mu.Lock()
		all := true
		for _, s := range states {
			all = all && s.done
		}
		mu.Unlock()
		if all {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	elapsed := time.Since(start)
	cpu1, err := benchkit.CPUSeconds(ctx, admin)
	if err != nil {
		return err
	}
	calls1, err := benchkit.Calls(ctx, admin)
	if err != nil {
		return err
	}
	cancel()
	wg.Wait()

	var scanned, left int64
	finished := 0
	var first, last time.Duration
	perID := map[string]int64{}
	for _, s := range states {
		scanned += s.res.Scanned
		perID[s.id] += s.res.Scanned
		for _, st := range s.res.Scans {
			if !st.Done {
				left += max(st.DBKeys-st.Examined, 0)
			}
		}
		if s.done {
			finished++
			if first == 0 || s.at < first {
				first = s.at
			}
			last = max(last, s.at)
		}
	}
	sec := elapsed.Seconds()
	scans := calls1["scan"] - calls0["scan"]
	fmt.Printf("%s:\n", name)
	fmt.Printf("  over %s: Redis CPU %.2f%% of a core; %.1f SCAN calls/s (%d); %.0f keys scanned/s\n",
		elapsed.Round(time.Millisecond), (cpu1-cpu0)/sec*100, float64(scans)/sec, scans, float64(scanned)/sec)
	if finished == len(states) {
		fmt.Printf("  time to finish: every search done in %s (first at %s)\n", last.Round(time.Millisecond), first.Round(time.Millisecond))
	} else {
		rate := float64(scanned) / sec
		proj := "never at this rate"
		if rate > 0 {
			proj = (elapsed + time.Duration(float64(left)/rate*float64(time.Second))).Round(time.Second).String()
		}
		fmt.Printf("  time to finish: %d of %d searches done in the window; %d keys left to scan: all done in about %s (projected at %.0f keys/s)\n",
			finished, len(states), left, proj, rate)
	}
	if len(perID) > 1 {
		var lo, hi int64 = -1, 0
		for _, v := range perID {
			if lo < 0 || v < lo {
				lo = v
			}
			hi = max(hi, v)
		}
		fmt.Printf("  per identity: %d identities, keys scanned from %d to %d (each %.1f%%–%.1f%% of the total; fair: %.1f%%)\n",
			len(perID), lo, hi, float64(lo)/float64(scanned)*100, float64(hi)/float64(scanned)*100, 100/float64(len(perID)))
		fmt.Printf("  granted by the budget, per identity: %v\n", b.Stats().Granted)
	}
	fmt.Println()
	return nil
}

// sweepCase runs one statistics sweeper over db14 at the default sweep
// budget for the window: what the default search budget is compared to.
func sweepCase(ctx context.Context, o options, admin *redis.Client, conn *redisview.Conn) error {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pool := stats.NewSweepers(sctx, stats.DefaultSweepBudget, time.Minute, slog.New(slog.DiscardHandler))
	cpu0, err := benchkit.CPUSeconds(ctx, admin)
	if err != nil {
		return err
	}
	calls0, err := benchkit.Calls(ctx, admin)
	if err != nil {
		return err
	}
	start := time.Now()
	_, release := pool.Acquire(conn, 14)
	time.Sleep(o.window)
	elapsed := time.Since(start)
	cpu1, err := benchkit.CPUSeconds(ctx, admin)
	if err != nil {
		return err
	}
	calls1, err := benchkit.Calls(ctx, admin)
	if err != nil {
		return err
	}
	release()
	cancel()
	pool.Wait()
	sec := elapsed.Seconds()
	scans := calls1["scan"] - calls0["scan"]
	fmt.Printf("the sweep (one database, default budget %d keys/s, SCAN COUNT %d):\n", stats.DefaultSweepBudget.KeysPerSec, stats.DefaultSweepBudget.Count)
	fmt.Printf("  over %s: Redis CPU %.2f%% of a core; %.1f SCAN calls/s (%d)\n", elapsed.Round(time.Millisecond), (cpu1-cpu0)/sec*100, float64(scans)/sec, scans)
	return nil
}
