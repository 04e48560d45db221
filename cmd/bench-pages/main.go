// Command bench-pages counts the Redis round trips (a command sent alone,
// or one pipeline) and commands that one load of each page costs: the
// database, user, rate limits, locks and bans pages of the embedded
// eIsland demo's data on a real redis-server. Only the round trips made
// on the request's own context are counted (a hook on every client of the
// connection); the background work a page reads (the limit sweep, the
// statistics sweep, the leaderboard index) runs on its own and is not a
// page's cost. Each page is loaded three times and every load reported;
// the first may include the background work's first wait.
//
//	go run ./cmd/bench-pages
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/demo"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/internal/server"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/stats"
)

func main() {
	if err := bench(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bench-pages:", err)
		os.Exit(1)
	}
}

// pageMark marks a request's context: the hook counts only its trips.
type pageMark struct{}

// trips counts the round trips and commands made on marked contexts.
type trips struct {
	mu          sync.Mutex
	trips, cmds int
}

func (t *trips) add(ctx context.Context, n int) {
	if ctx.Value(pageMark{}) == nil {
		return
	}
	t.mu.Lock()
	t.trips++
	t.cmds += n
	t.mu.Unlock()
}

func (t *trips) take() (int, int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	r, c := t.trips, t.cmds
	t.trips, t.cmds = 0, 0
	return r, c
}

func (t *trips) DialHook(next redis.DialHook) redis.DialHook { return next }
func (t *trips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		switch cmd.Name() {
		case "hello", "client", "select", "auth":
			// a new connection's handshake, not the page's
		default:
			t.add(ctx, 1)
		}
		return next(ctx, cmd)
	}
}
func (t *trips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if len(cmds) > 0 {
			t.add(ctx, len(cmds))
		}
		return next(ctx, cmds)
	}
}

// seedUser writes keys of one user in the families that name one (the
// shapes of the handlers' user page tests).
func seedUser(ctx context.Context, addr, user string) error {
	c := func(db int) *redis.Client { return redis.NewClient(&redis.Options{Addr: addr, DB: db}) }
	now := time.Now()
	var err error
	set := func(db int, key string, v any, ttl time.Duration) {
		cl := c(db)
		defer cl.Close()
		if e := cl.Set(ctx, key, v, ttl).Err(); e != nil && err == nil {
			err = e
		}
	}
	set(2, "identity:rate:"+user, 3, 5*time.Minute)
	set(4, "verify:slider:fail:account:"+demo.SliderKeyPart(user), 3, 10*time.Minute)
	set(5, "totp:security:replay:"+user+":59233841:004211", "1", 2*time.Minute)
	set(6, "auth:limit:login:lock:"+user, strconv.FormatInt(now.Add(time.Minute).UnixMilli(), 10), time.Minute)
	set(8, "issue-feedback:submit:"+user+":10.0.0.1", 1, time.Hour)
	set(12, "agent:balance:"+user, "12.50000000", 0)
	set(14, "mg:score:high:2048:"+user, 4096, time.Hour)
	c6, c14 := c(6), c(14)
	defer c6.Close()
	defer c14.Close()
	c6.ZAdd(ctx, "auth:limit:login:failures:"+user, redis.Z{Score: float64(now.UnixMilli()), Member: strconv.FormatInt(now.UnixMilli(), 10) + ":7"})
	c14.ZAdd(ctx, "mg:score:leaderboard:2048", redis.Z{Score: 4096, Member: user})
	return err
}

func bench(out io.Writer) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir, err := os.MkdirTemp("", "keydeck-bench-pages")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	addr, stop, err := redistest.Launch(dir)
	if err != nil {
		return err
	}
	defer stop()
	clients := map[int]*redis.Client{}
	defer func() {
		for _, c := range clients {
			c.Close()
		}
	}()
	client := func(db int) redis.Cmdable {
		if clients[db] == nil {
			clients[db] = redis.NewClient(&redis.Options{Addr: addr, DB: db})
		}
		return clients[db]
	}
	if err := demo.SeedEIsland(ctx, client, time.Now()); err != nil {
		return err
	}
	const user = "bench-user"
	if err := seedUser(ctx, addr, user); err != nil {
		return err
	}
	log := slog.New(slog.DiscardHandler)
	s, err := server.Start(ctx, server.Config{
		Conns:       []redisview.ConnConfig{{Name: "main", URL: "redis://" + addr}},
		PackFor:     map[string]string{"main": "eisland"},
		AuditClient: redis.NewClient(&redis.Options{Addr: addr, DB: 15}),
		Sweep:       stats.SweepBudget{KeysPerSec: 100000, Count: 500},
	}, log)
	if err != nil {
		return err
	}
	defer s.Close()
	h := &trips{}
	s.Registry().All()[0].AddHook(h)
	marked := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.Handler().ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), pageMark{}, true)))
	})
	srv := httptest.NewServer(marked)
	defer srv.Close()
	pages := []struct{ name, url string }{
		{"database db6", route.DatabaseURL("main", 6)},
		{"user " + user, route.UserURL("main", user)},
		{"rate limits", route.LimitsURL("main")},
		{"locks", route.LocksURL("main")},
		{"bans (check a name)", route.BanCheckURL("main", user)},
	}
	fmt.Fprintf(out, "round trips (commands) per page load, request context only; three loads each\n")
	for _, p := range pages {
		fmt.Fprintf(out, "%-22s", p.name)
		for range 3 {
			resp, err := http.Get(srv.URL + p.url)
			if err != nil {
				return err
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("%s: status %d", p.url, resp.StatusCode)
			}
			r, c := h.take()
			fmt.Fprintf(out, "  %3d (%d)", r, c)
		}
		fmt.Fprintln(out)
	}
	return nil
}
