package demo

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"regexp"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/redistest"
)

func TestStartServesTheLiveDemo(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, err := Start(ctx, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)

	conns := d.Connections()
	var names []string
	clients := map[string]*redis.Client{}
	for _, c := range conns {
		names = append(names, c.Name)
		opt, err := redis.ParseURL(c.URL)
		if err != nil {
			t.Fatalf("%s: %v", c.URL, err)
		}
		if opt.Addr[:10] != "127.0.0.1:" {
			t.Errorf("%s listens on %s, want loopback", c.Name, opt.Addr)
		}
		opt.DialerRetries = 1 // a refused dial after Close should fail fast
		cl := redis.NewClient(opt)
		t.Cleanup(func() { _ = cl.Close() })
		if err := cl.Ping(ctx).Err(); err != nil {
			t.Errorf("PING %s: %v", c.Name, err)
		}
		clients[c.Name] = cl
	}
	if !reflect.DeepEqual(names, []string{"eisland", "gateway", "vertique"}) {
		t.Fatalf("connections %v", names)
	}
	if n, _ := clients["vertique"].DBSize(ctx).Result(); n == 0 {
		t.Error("vertique server is empty")
	}

	opt, _ := redis.ParseURL(conns[0].URL)
	opt.DB = 14
	games := redis.NewClient(opt)
	t.Cleanup(func() { _ = games.Close() })
	var boards []string
	for _, g := range games_() {
		boards = append(boards, "mg:score:leaderboard:"+g)
	}
	// The waits below end as soon as what they wait for happens; their
	// deadlines only bound a failure (the simulator writes every 400 ms,
	// the clock ticks every 100 ms), and the times taken are logged.
	const failAfter = 30 * time.Second
	before := snapshotZSets(t, games, boards...)
	start := time.Now()
	redistest.Eventually(t, failAfter, "a leaderboard changed by simulated traffic", func() bool {
		return !reflect.DeepEqual(before, snapshotZSets(t, games, boards...))
	})
	t.Logf("a leaderboard changed after %v", time.Since(start).Round(time.Millisecond))

	// What miniredis must do for the demo to be faithful: the deduct
	// script's %.8f formatting in gopher-lua, and TTLs that run out by
	// themselves.
	opt.DB = 12
	bal := redis.NewClient(opt)
	t.Cleanup(func() { _ = bal.Close() })
	bal.Set(ctx, "agent:balance:test-probe", "10.5", 0)
	got, err := AgentBalanceDeduct.Run(ctx, bal, []string{"agent:balance:test-probe"}, "0.00120000").Text()
	if err != nil || got != "10.49880000|0.00120000" {
		t.Errorf("deduct on miniredis: %q, %v", got, err)
	}
	start = time.Now()
	bal.Set(ctx, "expiry-probe", "1", 200*time.Millisecond)
	redistest.Eventually(t, failAfter, "a key with a 200 ms TTL gone (the demo's clock runs)", func() bool {
		return bal.Exists(ctx, "expiry-probe").Val() == 0
	})
	t.Logf("a 200 ms key expired after %v", time.Since(start).Round(time.Millisecond))
	// TIME follows the wall clock (at most a clock tick behind when the
	// machine keeps up): never ahead of it, and moving — it reads later
	// than the demo's start, unlike a clock stuck where it was set.
	was := time.Now()
	tm, err := bal.Time(ctx).Result()
	if err != nil || tm.After(time.Now()) {
		t.Errorf("TIME = %v (%v), ahead of the wall clock", tm, err)
	}
	redistest.Eventually(t, failAfter, fmt.Sprintf("TIME past the wall clock's %v", was), func() bool {
		if tm, err = bal.Time(ctx).Result(); err != nil {
			t.Fatal(err)
		}
		return tm.After(was)
	})
	t.Logf("TIME lagged the wall clock by at most %v", time.Since(was).Round(time.Millisecond))
	if !regexp.MustCompile(`^\d+\.\d{8}$`).MatchString(bal.Get(ctx, "agent:balance:alice.w").Val()) {
		t.Error("seeded balance missing on the demo server")
	}

	d.Close()
	if clients["eisland"].Ping(ctx).Err() == nil {
		t.Error("eisland still answers after Close")
	}
}

func games_() []string {
	var ids []string
	for _, g := range games {
		ids = append(ids, g.ID)
	}
	return ids
}
