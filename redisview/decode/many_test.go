package decode_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/schema"
)

// tripHook counts round trips: a command sent alone or a pipeline; the
// connection handshake (HELLO, CLIENT SETINFO) aside.
type tripHook struct{ n int }

func (h *tripHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *tripHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, c redis.Cmder) error {
		if c.Name() != "hello" && c.Name() != "client" {
			h.n++
		}
		return next(ctx, c)
	}
}
func (h *tripHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, c []redis.Cmder) error {
		if c[0].Name() != "client" {
			h.n++
		}
		return next(ctx, c)
	}
}

// One key of a string role is one round trip (STRLEN, GETRANGE and PTTL
// pipelined; it was three); a concurrency set linking its members two; a
// reservation looking for its id in the sets three (the SCAN that finds
// them is one step). Every key of every role at once costs no more than
// the deepest of them, and reads the same as one at a time.
func TestReadManyRoundTrips(t *testing.T) {
	rs := redistest.Start(t)
	ctx := context.Background()
	g := rs.Client(0)
	g.Set(ctx, "q:reserved:req_a", 8192, 5*time.Minute)
	g.SAdd(ctx, "q:conc:k1", "req_a", "req_b")
	g.Set(ctx, "q:tokens:k1:202612", 5, time.Hour)
	g.Set(ctx, "cb:hint:openai:gpt-4o", "open", 30*time.Second)
	g.HSet(ctx, "q:rps:k1", "tokens", 3, "last_refill", time.Now().UnixMilli())
	env, now := decode.Env{Pack: gatewayPack}, time.Now()
	counted := func() (*redis.Client, *tripHook) {
		h := &tripHook{}
		c := redis.NewClient(&redis.Options{Addr: rs.Addr})
		t.Cleanup(func() { c.Close() })
		c.AddHook(h)
		c.Ping(ctx)
		h.n = 0
		return c, h
	}
	var items []decode.Item
	var one []decode.Result
	for _, c := range []struct {
		key   string
		trips int
	}{{"q:reserved:req_a", 3}, {"q:conc:k1", 2}, {"q:tokens:k1:202612", 1}, {"cb:hint:openai:gpt-4o", 1}, {"q:rps:k1", 1}} {
		m, ok := gatewayPack.Classifier().Match(0, c.key)
		if !ok {
			t.Fatalf("%q is not a gateway key", c.key)
		}
		items = append(items, decode.Item{Match: m, Key: c.key})
		cl, h := counted()
		r, err := decode.DecodeIn(ctx, cl, env, m, c.key, now)
		if err != nil || r.State == nil || h.n != c.trips {
			t.Errorf("%s: %d round trips, want %d (%+v, %v)", c.key, h.n, c.trips, r, err)
		}
		one = append(one, r)
	}
	cl, h := counted()
	all := decode.ReadMany(ctx, cl, env, items, now)
	if h.n != 3 {
		t.Errorf("%d keys of %d roles: %d round trips, want 3", len(items), len(items), h.n)
	}
	for i, d := range all {
		if d.Err != nil || d.Result.Note != one[i].Note || d.Result.Role != one[i].Role || d.Result.State == nil {
			t.Errorf("%s read with the others: %+v %v; alone: %+v", items[i].Key, d.Result, d.Err, one[i])
		}
	}
}

// A reader that queues a command only sometimes (a sliding window without
// a lock: no EXISTS) finishes from the replies it has; an unqueued command
// is no error.
func TestSlidingWindowWithoutLock(t *testing.T) {
	db := redistest.Start(t).Client(0)
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 1, 0, 0, 0, time.UTC)
	db.ZAdd(ctx, "w", redis.Z{Score: float64(now.Add(-time.Second).UnixMilli()), Member: "a"})
	f := &schema.Family{ID: "w", Role: schema.RoleSlidingWindow, Params: &schema.SlidingWindowParams{Limit: 3, Window: time.Minute, ScoreUnit: "ms"}}
	r, err := decode.DecodeIn(ctx, db, decode.Env{}, schema.Match{Family: f}, "w", now)
	sw := decode.As[decode.SlidingWindow](r)
	if err != nil || sw == nil || sw.InWindow != 1 || sw.LockKey != "" || sw.Locked {
		t.Fatalf("window without a lock: %+v %v", r, err)
	}
}
