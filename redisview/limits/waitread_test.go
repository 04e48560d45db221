package limits_test

import (
	"context"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/clock"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/limits"
)

// A page's wait for a sweep's first read runs on the pool's clock: a
// fake-clocked console's page waits until the clock passes its bound,
// like every other timer of the sweep. The connection has no pack, so
// the sweep never reads.
func TestSweeperWaitReadOnThePoolsClock(t *testing.T) {
	c, err := redisview.Open(redisview.ConnConfig{Name: "t", URL: "redis://127.0.0.1:1/0"}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fake := clock.NewFake(time.Time{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pool := limits.NewPool(ctx, limits.Budget{}, time.Minute, limits.WithClock(fake))
	defer pool.Wait()
	defer cancel()
	s, release := pool.Acquire(c)
	defer release()
	const bound = 17 * time.Minute
	done := make(chan struct{})
	go func() { s.WaitRead(ctx, bound); close(done) }()
	redistest.Eventually(t, 10*time.Second, "the page's wait armed on the pool's clock", func() bool {
		return slices.Contains(fake.Deadlines(), bound)
	})
	fake.Advance(bound)
	redistest.Eventually(t, 10*time.Second, "the wait ends when its bound passes on the clock", func() bool {
		select {
		case <-done:
			return true
		default:
			return false
		}
	})
}
