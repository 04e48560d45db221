package quotas_test

import (
	"context"
	"log/slog"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/clock"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/quotas"
	"github.com/keydeck/keydeck/redisview/schema"
)

// A page's wait for a walker's first step runs on the walkers' clock, like
// their steps and linger. The server accepts and never answers, so the
// first step does not end before the clock passes the wait's bound.
func TestWalkerWaitReadOnTheWalkersClock(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		var held []net.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held = append(held, c) // silent: every command waits
		}
	}()
	c, err := redisview.Open(redisview.ConnConfig{Name: "t", URL: "redis://" + ln.Addr().String() + "/0"}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.ForcePack(schema.BuiltinPack("gateway"))
	fake := clock.NewFake(time.Time{})
	ctx, cancel := context.WithCancel(context.Background())
	ws := quotas.NewWalkers(ctx, quotas.Budget{}, time.Second, time.Minute, nil, quotas.WithClock(fake))
	defer ws.Wait()
	defer cancel()
	w, release := ws.Acquire(c)
	defer release()
	const bound = 17 * time.Minute
	done := make(chan struct{})
	go func() { w.WaitRead(ctx, bound); close(done) }()
	redistest.Eventually(t, 10*time.Second, "the page's wait armed on the walkers' clock", func() bool {
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
