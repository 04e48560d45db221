// Command bench-search measures a search on a real redis-server holding
// 1,000,000 keys shaped like the eIsland databases (slider CAPTCHA keys
// under base64url accounts and IPs in db4, TOTP replay nonces in db5, login
// failures in db6, feedback counters per user and IP in db8, mini-game
// scores and sessions in db14). It searches a username and an account and
// reports, for the first request and for the whole search (continuing until
// every scan is done): the Redis commands issued (INFO commandstats delta),
// the time, the keys derived and checked against those found by scan, and
// the slowest command (SLOWLOG, every command logged).
//
//	go run ./cmd/bench-search [-keys 1000000]
package main

import (
	"context"
	"encoding/base64"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

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

// shape is a share of the keys in one database, written by key(i).
type shape struct {
	db    int
	share float64
	write func(p redis.Pipeliner, ctx context.Context, i int)
}

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

func user(i int) string    { return "user" + strconv.Itoa(i%50000) }
func account(i int) string { return fmt.Sprintf("acct:%d/β", i%50000) }
func ip(i int) string      { return fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255) }

var shapes = []shape{
	{4, 0.15, func(p redis.Pipeliner, ctx context.Context, i int) {
		switch i % 3 {
		case 0:
			p.Set(ctx, "verify:slider:fail:account:"+b64(account(i)+"#"+strconv.Itoa(i)), 1, 10*time.Minute)
		case 1:
			p.HSet(ctx, "verify:slider:rate:create:ip:"+b64(ip(i)), "tokens", 5, "ts", 1)
		default:
			p.Set(ctx, "verify:slider:challenge:"+strconv.FormatInt(int64(i)*2654435761, 16), 120, 2*time.Minute)
		}
	}},
	{5, 0.15, func(p redis.Pipeliner, ctx context.Context, i int) {
		p.Set(ctx, fmt.Sprintf("totp:security:replay:%s:%d:%06d", user(i), 58800000+i, i%1000000), "1", 2*time.Minute)
	}},
	{6, 0.15, func(p redis.Pipeliner, ctx context.Context, i int) {
		if i%2 == 0 {
			p.ZAdd(ctx, "auth:limit:login:failures:"+user(i)+"-"+strconv.Itoa(i), redis.Z{Score: float64(i), Member: strconv.Itoa(i)})
		} else {
			p.Set(ctx, fmt.Sprintf("auth:replay:%s:POST:/api/pay:%d", user(i), i), i, 5*time.Minute)
		}
	}},
	{8, 0.15, func(p redis.Pipeliner, ctx context.Context, i int) {
		p.Set(ctx, "issue-feedback:submit:"+user(i)+":"+ip(i), 1, time.Hour)
	}},
	{14, 0.40, func(p redis.Pipeliner, ctx context.Context, i int) {
		switch i % 4 {
		case 0:
			p.Set(ctx, fmt.Sprintf("mg:score:high:%d:%s", i%7, user(i)), i%100000, time.Hour)
		case 1:
			p.HSet(ctx, fmt.Sprintf("mg:score:user-meta:%d:%s", i%7, user(i)), "score", i%100000, "moves", i%500)
		case 2:
			p.Set(ctx, fmt.Sprintf("mg:score:idempotency:%x-%d", i*2654435761, i), "1", 24*time.Hour)
		default:
			p.Set(ctx, fmt.Sprintf("mg:score:session:%d:%s:s%d", i%7, user(i), i), i, 6*time.Hour)
		}
	}},
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
	if err := load(ctx, addr, n); err != nil {
		return err
	}
	// The searched people: a username and an account with keys of their own.
	const who, acct = "user4242", "Zoë:ops/β"
	c4, c6 := redis.NewClient(&redis.Options{Addr: addr, DB: 4}), redis.NewClient(&redis.Options{Addr: addr, DB: 6})
	defer c4.Close()
	defer c6.Close()
	c4.Set(ctx, "verify:slider:fail:account:"+b64(acct), 2, 10*time.Minute)
	c4.HSet(ctx, "verify:slider:rate:create:account:"+b64(acct), "tokens", 3, "ts", 1)
	c4.SAdd(ctx, "verify:slider:account:challenges:"+b64(acct), "c1")
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

func load(ctx context.Context, addr string, n int) error {
	i := 0
	for si, s := range shapes {
		c := redis.NewClient(&redis.Options{Addr: addr, DB: s.db})
		k := int(s.share * float64(n))
		if si == len(shapes)-1 {
			k = n - i
		}
		p := c.Pipeline()
		for j := 0; j < k; j, i = j+1, i+1 {
			s.write(p, ctx, i)
			if p.Len() >= 10000 {
				if _, err := p.Exec(ctx); err != nil {
					return err
				}
			}
		}
		if _, err := p.Exec(ctx); err != nil {
			return err
		}
		c.Close()
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
	var cursors map[string]uint64
	for {
		before, err := calls(ctx, admin)
		if err != nil {
			return err
		}
		t := time.Now()
		r, err := search.Run(ctx, conn, query, cursors, search.DefaultLimits)
		took := time.Since(t)
		if err != nil {
			return err
		}
		after, err := calls(ctx, admin)
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
	slowest, err := slowest(ctx, admin)
	if err != nil {
		return err
	}
	fmt.Printf("search %q (read as %s)\n", q, query.Kind)
	show := func(label string, t totals) {
		fmt.Printf("  %-14s %2d request(s), %8s; commands %s; %d exact keys derived and checked, %d found; %d found by scan in %d SCAN calls\n",
			label, t.requests, t.took.Round(100*time.Microsecond), cmdList(t.calls), t.checked, t.derived, t.scanned, t.scanCalls)
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
	before, err := calls(ctx, admin)
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
	after, err := calls(ctx, admin)
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
	slowest, err := slowest(ctx, admin)
	if err != nil {
		return err
	}
	fmt.Printf("  %-14s %2d step(s),   %8s (+ %d × the hub's gap between polls); commands %s; %d derived, %d found by scan in %d SCAN calls; ~%d keys scanned\n",
		"live topic", steps, took.Round(100*time.Microsecond), max(steps-1, 0), cmdList(diff), derived, scanned, scanCalls, r.Scanned)
	fmt.Printf("  slowest command (SLOWLOG, live): %s\n\n", slowest)
	return nil
}

func calls(ctx context.Context, c *redis.Client) (map[string]int64, error) {
	txt, err := c.Info(ctx, "commandstats").Result()
	if err != nil {
		return nil, err
	}
	out := redistest.ParseCommandStats(txt)
	for _, own := range []string{"slowlog", "slowlog|reset", "slowlog|get", "config|resetstat"} {
		delete(out, own)
	}
	return out, nil
}

func cmdList(m map[string]int64) string {
	var parts []string
	var total int64
	for k, v := range m {
		if v > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", strings.ToUpper(k), v))
			total += v
		}
	}
	sort.Strings(parts)
	return fmt.Sprintf("%d (%s)", total, strings.Join(parts, ", "))
}

// slowest is the slowest command in SLOWLOG, ignoring the bench's own.
func slowest(ctx context.Context, c *redis.Client) (string, error) {
	logs, err := c.SlowLogGet(ctx, -1).Result()
	if err != nil {
		return "", err
	}
	var best redis.SlowLog
	over, n := 0, 0
	for _, l := range logs {
		if len(l.Args) == 0 {
			continue
		}
		switch strings.ToLower(l.Args[0]) {
		case "info", "slowlog", "config":
			continue
		}
		n++
		if l.Duration > 2*time.Millisecond {
			over++
		}
		if l.Duration > best.Duration {
			best = l
		}
	}
	if len(best.Args) == 0 {
		return "none logged", nil
	}
	return fmt.Sprintf("%s %.80q; %d of %d commands over 2 ms", best.Duration, strings.Join(best.Args, " "), over, n), nil
}
