package browse_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview/browse"
)

// tripCounter counts what a client sends: one per command sent alone,
// one per pipeline.
type tripCounter struct{ trips, cmds atomic.Int64 }

func (h *tripCounter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *tripCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if handshake(cmd) {
			return next(ctx, cmd)
		}
		h.trips.Add(1)
		h.cmds.Add(1)
		return next(ctx, cmd)
	}
}
func (h *tripCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if len(cmds) > 0 && handshake(cmds[0]) {
			return next(ctx, cmds)
		}
		h.trips.Add(1)
		h.cmds.Add(int64(len(cmds)))
		return next(ctx, cmds)
	}
}

// handshake: a command a new connection sends before any of the caller's.
func handshake(c redis.Cmder) bool {
	switch c.Name() {
	case "hello", "client", "select", "auth":
		return true
	}
	return false
}

// Fifty readers of three dependent steps each (STRLEN, then GET or a
// missing key's redis.Nil, then a pipeline of PTTL and TYPE) cost three
// round trips together, and each gets its own replies.
func TestBatchOneRoundTripPerStep(t *testing.T) {
	rs := redistest.Start(t)
	real := rs.Client(3)
	ctx := context.Background()
	for i := range 50 {
		if i%5 != 0 { // every fifth key is missing
			real.Set(ctx, fmt.Sprintf("k:%02d", i), fmt.Sprintf("value-%d", i*i), 0)
		}
	}
	h := &tripCounter{}
	real.AddHook(h)
	got := make([]string, 50)
	trips := browse.Batch(ctx, real, 50, func(i int, c redis.Cmdable) {
		key := fmt.Sprintf("k:%02d", i)
		n, err := c.StrLen(ctx, key).Result()
		if err != nil {
			got[i] = "strlen: " + err.Error()
			return
		}
		v, err := c.Get(ctx, key).Result()
		if errors.Is(err, redis.Nil) {
			v = "(nil)"
		} else if err != nil {
			got[i] = "get: " + err.Error()
			return
		}
		pipe := c.Pipeline()
		ttl := pipe.PTTL(ctx, key)
		typ := pipe.Type(ctx, key)
		if _, err := pipe.Exec(ctx); err != nil {
			got[i] = "pipe: " + err.Error()
			return
		}
		got[i] = fmt.Sprintf("%d %s %d %s", n, v, ttl.Val(), typ.Val())
	})
	for i, g := range got {
		want := fmt.Sprintf("%d value-%d -1 string", len(fmt.Sprintf("value-%d", i*i)), i*i)
		if i%5 == 0 {
			want = "0 (nil) -2 none"
		}
		if g != want {
			t.Errorf("reader %d got %q, want %q", i, g, want)
		}
	}
	if trips != 3 || h.trips.Load() != 3 || h.cmds.Load() != 200 {
		t.Errorf("%d round trips (client saw %d, %d commands); want 3 and 200", trips, h.trips.Load(), h.cmds.Load())
	}
	// Readers that stop early do not hold the others back.
	h.trips.Store(0)
	trips = browse.Batch(ctx, real, 10, func(i int, c redis.Cmdable) {
		for range i {
			c.Exists(ctx, "k:01")
		}
	})
	if trips != 9 || h.trips.Load() != 9 {
		t.Errorf("readers of 0..9 steps: %d round trips, want 9", trips)
	}
}
