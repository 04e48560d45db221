// Command bench-search measures a search on a real redis-server holding
// 1,000,000 keys shaped like the eIsland databases (slider CAPTCHA keys
// under URL-safe base64 accounts and IPs in db4, TOTP replay nonces in
// db5, login failures in db6, feedback counters per user and IP in db8,
// mini-game scores and sessions in db14). It searches a username and an account and
// reports, for the first request and for the whole search (continuing until
// every scan is done): the Redis commands issued (INFO commandstats delta),
// the time, the keys derived and checked against those found by scan, and
// the slowest command (SLOWLOG, every command logged).
//
//	go run ./cmd/bench-search [-keys 1000000]
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/benchkit"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/redisview/search"
)

func main() {
	keys := flag.Int("keys", 1_000_000, "keys to load")
	flag.Parse()
	if err := bench(*keys); err != nil {
		fmt.Fprintln(os.Stderr, "bench-search:", err)
		os.Exit(1)
	}
}

func bench(n int) error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "keydeck-bench-search")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	addr, stop, err := redistest.Launch(dir, "--slowlog-log-slower-than", "0", "--slowlog-max-len", "100000")
	if err != nil {
		return err
	}
	defer stop()
	t0 := time.Now()
	if err := benchkit.LoadEisland(ctx, addr, n); err != nil {
		return err
	}
	// The searched people: a username and an account with keys of their own.
	const who, acct = "user4242", "Zoë:ops/β"
	c4, c6 := redis.NewClient(&redis.Options{Addr: addr, DB: 4}), redis.NewClient(&redis.Options{Addr: addr, DB: 6})
	defer c4.Close()
	defer c6.Close()
	c4.Set(ctx, "verify:slider:fail:account:"+benchkit.B64(acct), 2, 10*time.Minute)
	c4.HSet(ctx, "verify:slider:rate:create:account:"+benchkit.B64(acct), "tokens", 3, "ts", 1)
	c4.SAdd(ctx, "verify:slider:account:challenges:"+benchkit.B64(acct), "c1")
	c6.ZAdd(ctx, "auth:limit:login:failures:"+who, redis.Z{Score: 1, Member: "1:1"})
	fmt.Printf("loaded %d keys (db4 15%%, db5 15%%, db6 15%%, db8 15%%, db14 40%%) in %s\n\n", n, time.Since(t0).Round(time.Millisecond))

	admin := redis.NewClient(&redis.Options{Addr: addr})
	defer admin.Close()
	conn, err := redisview.Open(redisview.ConnConfig{Name: "bench", URL: "redis://" + addr}, slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}
	defer conn.Close()
	conn.ForcePack(schema.BuiltinPack("eisland"))
	for _, q := range []string{who, acct, "account=" + acct} {
		if err := measure(ctx, admin, conn, q); err != nil {
			return err
		}
	}
	return nil
}

type totals struct {
	requests, derived, checked, scanned, scanCalls int
	calls                                          map[string]int64
	took                                           time.Duration
}

// measure runs the search's first request, then continues it until every
// scan is done, and prints both.
func measure(ctx context.Context, admin *redis.Client, conn *redisview.Conn, q string) error {
	admin.ConfigResetStat(ctx)
	admin.Do(ctx, "SLOWLOG", "RESET")
	query := search.Parse(q, conn.Pack())
	var first, all totals
	var cursors map[string]redisview.Cursor
	for {
		before, err := benchkit.Calls(ctx, admin)
		if err != nil {
			return err
		}
		t := time.Now()
		r, err := search.Run(ctx, conn, query, cursors, search.DefaultLimits)
		took := time.Since(t)
		if err != nil {
			return err
		}
		after, err := benchkit.Calls(ctx, admin)
		if err != nil {
			return err
		}
		all.requests++
		all.took += took
		all.checked += r.Checked
		if all.calls == nil {
			all.calls = map[string]int64{}
		}
		for cmd, v := range after {
			all.calls[cmd] += v - before[cmd]
		}
		all.calls["info"]-- // the bench's own INFO commandstats before the request
		for _, h := range r.Hits {
			if h.Scan {
				all.scanned++
			} else {
				all.derived++
			}
		}
		for _, s := range r.Scans {
			all.scanCalls += s.Calls
		}
		if all.requests == 1 {
			first = all
			first.calls = map[string]int64{}
			for k, v := range all.calls {
				first.calls[k] = v
			}
		}
		cur := r.Cursors()
		if cur == "" {
			break
		}
		if cursors, err = search.ParseCursors(cur); err != nil {
			return err
		}
	}
	slowest, err := benchkit.Slowest(ctx, admin)
	if err != nil {
		return err
	}
	fmt.Printf("search %q (read as %s)\n", q, query.Kind)
	show := func(label string, t totals) {
		fmt.Printf("  %-14s %2d request(s), %8s; commands %s; %d exact keys derived and checked, %d found; %d found by scan in %d SCAN calls\n",
			label, t.requests, t.took.Round(100*time.Microsecond), benchkit.CmdList(t.calls), t.checked, t.derived, t.scanned, t.scanCalls)
	}
	show("first request", first)
	show("whole search", all)
	fmt.Printf("  slowest command (SLOWLOG, all %d requests): %s\n", all.requests, slowest)
	return live(ctx, admin, conn, query)
}

// live steps the search as the search page's live topic does
// (search.LiveLimits), back to back: the topic adds the hub's gap between
// polls (MinGap, 200 ms at the default 1 s interval) to each step.
func live(ctx context.Context, admin *redis.Client, conn *redisview.Conn, query search.Query) error {
	before, err := benchkit.Calls(ctx, admin)
	if err != nil {
		return err
	}
	admin.Do(ctx, "SLOWLOG", "RESET")
	s := search.NewSession(conn, query, search.LiveLimits)
	var r search.Result
	steps := 0
	t := time.Now()
	for !s.Done() {
		if r, err = s.Step(ctx); err != nil {
			return err
		}
		steps++
	}
	took := time.Since(t)
	after, err := benchkit.Calls(ctx, admin)
	if err != nil {
		return err
	}
	diff := map[string]int64{}
	for cmd, v := range after {
		diff[cmd] = v - before[cmd]
	}
	diff["info"]--
	derived, scanned, scanCalls := 0, 0, 0
	for _, h := range r.Hits {
		if h.Scan {
			scanned++
		} else {
			derived++
		}
	}
	for _, sc := range r.Scans {
		scanCalls += sc.Calls
	}
	slowest, err := benchkit.Slowest(ctx, admin)
	if err != nil {
		return err
	}
	fmt.Printf("  %-14s %2d step(s),   %8s (+ %d × the hub's gap between polls); commands %s; %d derived, %d found by scan in %d SCAN calls; ~%d keys scanned\n",
		"live topic", steps, took.Round(100*time.Microsecond), max(steps-1, 0), benchkit.CmdList(diff), derived, scanned, scanCalls, r.Scanned)
	fmt.Printf("  slowest command (SLOWLOG, live): %s\n\n", slowest)
	return nil
}
