// Command bench-user measures the user page's reads on a real
// redis-server holding 1,000,000 keys shaped like the eIsland databases
// (the shapes of cmd/bench-search: TOTP replay nonces in db5, login
// failures and replay nonces in db6, feedback counters in db8, mini-game
// scores, metadata and sessions in db14, slider keys in db4; plus seven
// leaderboards in db14 and one user, "user4242", with a key in every
// family that names a user). It reports, for the page's first read (with
// the bounded scans), a live re-read (no scan) and a whole scan pass
// (reads until every scan is done): the Redis commands (INFO commandstats
// delta), the time, the keys found, and the slowest command (SLOWLOG).
//
//	go run ./cmd/bench-user [-keys 1000000]
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/benchkit"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/internal/server"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/leaderboard"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/redisview/search"
)

func main() {
	keys := flag.Int("keys", 1_000_000, "keys to load")
	flag.Parse()
	if err := bench(*keys); err != nil {
		fmt.Fprintln(os.Stderr, "bench-user:", err)
		os.Exit(1)
	}
}

const who = "user4242"

// own writes the user's keys in every family that names a user, and the
// seven leaderboards (200 members each, the user on some).
func own(ctx context.Context, addr string) error {
	c := func(db int) *redis.Client { return redis.NewClient(&redis.Options{Addr: addr, DB: db}) }
	now := time.Now()
	ms := strconv.FormatInt(now.UnixMilli(), 10)
	type kv struct {
		db       int
		key, val string
		ttl      time.Duration
	}
	for _, k := range []kv{
		{1, "server:avatar-data::" + who, "https://cdn/a.png", 5 * time.Minute},
		{2, "identity:rate:" + who, "2", 5 * time.Minute},
		{2, "identity:verified:" + who, "1", time.Hour},
		{2, "verify:attempts:LOGIN:u4242@x.io", "3", 5 * time.Minute},
		{4, "verify:slider:fail:account:" + benchkit.B64(who), "2", 10 * time.Minute},
		{5, "totp:security:fail:" + who, "4", 10 * time.Minute},
		{5, "totp:security:secret:enc:" + who, "Q0lQSEVS", time.Hour},
		{6, "auth:limit:login:lock:" + who, strconv.FormatInt(now.Add(9*time.Minute).UnixMilli(), 10), 9 * time.Minute},
		{7, "wallpaper:upload:" + who, "2", time.Hour},
		{7, "upload:limit:user-avatar:account:" + who, "1", time.Hour},
		{10, "payment:user:active-order:" + who, "EI4242", time.Hour},
		{10, "payment:order:channel:EI4242", "wechat", time.Hour},
		{10, "payment:order:receipt-email:EI4242", "u4242@x.io", time.Hour},
		{10, "payment:lock:create:pro-month:" + who, "uuid", 15 * time.Second},
		{12, "agent:balance:" + who, "42.00000000", 0},
	} {
		cl := c(k.db)
		if err := cl.Set(ctx, k.key, k.val, k.ttl).Err(); err != nil {
			return err
		}
		cl.Close()
	}
	c9 := c(9)
	defer c9.Close()
	for _, banned := range []string{"user17", "user99", who} {
		for _, pos := range redisview.BloomPositions(banned, 1000003, 6) {
			c9.SetBit(ctx, "user:ban:bloom", pos, 1)
		}
		c9.SAdd(ctx, "user:ban:set", banned)
	}
	c4, c6, c14 := c(4), c(6), c(14)
	defer c4.Close()
	defer c6.Close()
	defer c14.Close()
	c4.HSet(ctx, "verify:slider:rate:create:account:"+benchkit.B64(who), "tokens", "3", "ts", ms)
	c6.ZAdd(ctx, "auth:limit:login:failures:"+who, redis.Z{Score: float64(now.UnixMilli()), Member: ms + ":1"})
	for g := range 7 {
		board := "mg:score:leaderboard:" + strconv.Itoa(g)
		for m := range 200 {
			c14.ZAdd(ctx, board, redis.Z{Score: float64(m * 10), Member: benchkit.User(m*250 + g)})
		}
		if g%2 == 0 {
			c14.ZAdd(ctx, board, redis.Z{Score: 1234, Member: who})
		}
	}
	return nil
}

func bench(n int) error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "keydeck-bench-user")
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
	if err := own(ctx, addr); err != nil {
		return err
	}
	fmt.Printf("loaded %d keys (db4 15%%, db5 15%%, db6 15%%, db8 15%%, db14 40%%) + %s's keys and 7 leaderboards in %s\n\n", n, who, time.Since(t0).Round(time.Millisecond))
	admin := redis.NewClient(&redis.Options{Addr: addr})
	defer admin.Close()
	conn, err := redisview.Open(redisview.ConnConfig{Name: "bench", URL: "redis://" + addr}, slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}
	defer conn.Close()
	conn.ForcePack(schema.BuiltinPack("eisland"))

	// The leaderboard index: shared by every page, rescanned in the
	// background at most every 30 s; not a cost of the user page.
	before, _ := benchkit.Calls(ctx, admin)
	t := time.Now()
	refs, _, err := leaderboard.Scan(ctx, conn, leaderboard.DefaultListLimit)
	if err != nil {
		return err
	}
	after, _ := benchkit.Calls(ctx, admin)
	fmt.Printf("leaderboard index (background, shared, every 30 s at most): %d boards, %s, commands %s\n\n", len(refs), time.Since(t).Round(100*time.Microsecond), benchkit.CmdList(delta(before, after)))
	var boards []search.Board
	for _, r := range refs {
		boards = append(boards, search.Board{DB: r.DB, Key: r.Key, Family: r.Family})
	}
	// Warm the connections (HELLO/SELECT per database are not the page's).
	if _, err := search.RunUser(ctx, conn, search.UserQuery{Subject: search.Subject{Name: "nobody"}, Boards: boards, Scan: true, Reprobe: true}, search.UserLimits{Calls: 1, Count: 10, Cap: 10}); err != nil {
		return err
	}

	admin.Do(ctx, "SLOWLOG", "RESET")
	q := search.UserQuery{Subject: search.Subject{Name: who}, Boards: boards, Scan: true, Reprobe: true}
	r, err := measure(ctx, admin, conn, "first read (page load, with scans)", q)
	if err != nil {
		return err
	}
	q2 := search.UserQuery{Subject: q.Subject, Boards: boards, Known: r.Hits}
	if _, err := measure(ctx, admin, conn, "live tick (the keys found, no scan)", q2); err != nil {
		return err
	}
	q2.Reprobe = true
	if _, err := measure(ctx, admin, conn, "live re-probe (every 2 s: every derived key, no scan)", q2); err != nil {
		return err
	}
	// A whole scan pass: one read per rescan until every scan is done.
	reads, cmds, found := 1, r.Commands, len(r.Hits)
	var took time.Duration = r.Took
	cur := r.Cursors()
	known := r.Hits
	for cur != nil {
		rr, err := search.RunUser(ctx, conn, search.UserQuery{Subject: q.Subject, Boards: boards, Scan: true, Reprobe: true, Cursors: cur, Known: known}, search.DefaultUserLimits)
		if err != nil {
			return err
		}
		reads++
		cmds += rr.Commands
		took += rr.Took
		cur, known, found = rr.Cursors(), rr.Hits, len(rr.Hits)
	}
	fmt.Printf("whole scan pass: %d reads (one per rescan), %d commands in all, %s in all; %d keys found\n", reads, cmds, took.Round(100*time.Microsecond), found)
	s, err := benchkit.Slowest(ctx, admin)
	if err != nil {
		return err
	}
	fmt.Printf("slowest command of the reads above (SLOWLOG): %s\n", s)
	return page(ctx, addr)
}

func measure(ctx context.Context, admin *redis.Client, conn *redisview.Conn, label string, q search.UserQuery) (search.UserResult, error) {
	before, err := benchkit.Calls(ctx, admin)
	if err != nil {
		return search.UserResult{}, err
	}
	t := time.Now()
	r, err := search.RunUser(ctx, conn, q, search.DefaultUserLimits)
	took := time.Since(t)
	if err != nil {
		return r, err
	}
	// What the page adds: each key decoded by its role (handlers'
	// keyDecoded: decode.DecodeIn, never a sensitive family).
	t = time.Now()
	decoded := 0
	cls := conn.Pack().Classifier()
	for _, h := range r.Hits {
		if h.Family == nil || h.Family.Sensitive || !decode.Supported(h.Family.Role) || h.Family.TypeViolation(h.Type) != "" {
			continue
		}
		m, ok := cls.Match(h.DB, h.Key)
		if !ok {
			continue
		}
		if _, err := decode.DecodeIn(ctx, conn.DB(h.DB), decode.Env{Pack: conn.Pack(), DB: h.DB}, m, h.Key, time.Now()); err != nil {
			return r, err
		}
		decoded++
	}
	decTook := time.Since(t)
	after, err := benchkit.Calls(ctx, admin)
	if err != nil {
		return r, err
	}
	d := delta(before, after)
	d["info"]-- // the bench's own INFO commandstats before the read
	scans, scanned := 0, 0
	for _, s := range r.Scans {
		scans += s.Calls
	}
	for _, h := range r.Hits {
		if h.Scan {
			scanned++
		}
	}
	fmt.Printf("%s: %s (reads %s + %d keys decoded %s); commands %s; %d exact keys derived and checked; %d keys found (%d by scan, %d SCAN calls); %d ranks; ban: %s\n",
		label, (took + decTook).Round(100*time.Microsecond), took.Round(100*time.Microsecond), decoded, decTook.Round(100*time.Microsecond), benchkit.CmdList(d),
		r.Checked, len(r.Hits), scanned, scans, len(r.Ranks), banVerdict(r))
	for _, s := range r.Scans {
		fmt.Printf("    scan db%d %q: %d calls, about %d of %d keys, done %v\n", s.DB, s.Match, s.Calls, s.Examined, s.DBKeys, s.Done)
	}
	return r, nil
}

func banVerdict(r search.UserResult) string {
	if len(r.Bans) == 0 {
		return "no ban bloom"
	}
	return r.Bans[0].Verdict
}

func delta(before, after map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for k, v := range after {
		if v != before[k] {
			out[k] = v - before[k]
		}
	}
	return out
}

// page times the whole user page over HTTP on the real console (decoded,
// rendered): the first load, which waits for the leaderboard index's
// first scan, then loads with the index known.
func page(ctx context.Context, addr string) error {
	srv, err := server.Start(ctx, server.Config{Conns: []redisview.ConnConfig{{Name: "bench", URL: "redis://" + addr}},
		PackFor: map[string]string{"bench": "eisland"}, AuditClient: redis.NewClient(&redis.Options{Addr: addr, DB: 15})}, slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}
	defer srv.Close()
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	for deadline := time.Now().Add(10 * time.Second); !srv.Registry().All()[0].Status().Up; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			return fmt.Errorf("the console never saw Redis up")
		}
	}
	u := hs.URL + "/c/bench/user?name=" + who
	var times []string
	for i := range 4 {
		t := time.Now()
		res, err := http.Get(u)
		if err != nil {
			return err
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || !strings.Contains(string(b), `data-testid="user-key"`) {
			return fmt.Errorf("user page: %d %.300s", res.StatusCode, b)
		}
		label := "load"
		if i == 0 {
			label = "first load (the leaderboard index not read yet)"
		}
		times = append(times, fmt.Sprintf("%s %s", label, time.Since(t).Round(100*time.Microsecond)))
	}
	fmt.Printf("the page over HTTP (decoded, rendered, support actions): %s\n", strings.Join(times, "; "))
	return nil
}
