package quotas

import (
	"context"
	"errors"
	"time"

	"github.com/keydeck/keydeck/internal/clock"
	"github.com/keydeck/keydeck/internal/linger"
	"github.com/keydeck/keydeck/redisview"
)

// Walkers runs one Walker per connection while someone watches it, and a
// while after (Linger), stepping every Interval.
type Walkers struct {
	budget   Budget
	interval time.Duration
	now      func() time.Time
	clock    clock.Clock
	pool     *linger.Pool[*redisview.Conn, *Walker]
}

// Option sets up the walkers.
type Option func(*Walkers)

// WithClock runs the walkers' steps, lingering and first-read waits on c,
// and makes it their clock where now is nil (the wall clock without).
func WithClock(c clock.Clock) Option { return func(ws *Walkers) { ws.clock = c } }

// NewWalkers returns the registry; its walkers stop when ctx ends.
func NewWalkers(ctx context.Context, b Budget, interval, lingerFor time.Duration, now func() time.Time, opts ...Option) *Walkers {
	if interval <= 0 {
		interval = time.Second
	}
	if lingerFor <= 0 {
		lingerFor = time.Minute
	}
	ws := &Walkers{budget: b, interval: interval, now: now}
	for _, o := range opts {
		o(ws)
	}
	ws.clock = clock.Or(ws.clock)
	if ws.now == nil {
		ws.now = ws.clock.Now
	}
	ws.pool = linger.New(ctx, lingerFor, ws.clock, linger.Hooks[*redisview.Conn, *Walker]{
		Run: func(ctx context.Context, _ *redisview.Conn, w *Walker) { ws.run(ctx, w) },
	})
	return ws
}

// Acquire returns conn's walker, started if it was not running; release
// when done.
func (ws *Walkers) Acquire(conn *redisview.Conn) (*Walker, func()) {
	return ws.pool.Acquire(conn, func() *Walker {
		w := NewWalker(conn, ws.budget, ws.now)
		w.clock = ws.clock
		return w
	})
}

// Wait waits for every walker to stop (after ctx ended).
func (ws *Walkers) Wait() { ws.pool.Wait() }

func (ws *Walkers) run(ctx context.Context, w *Walker) {
	t := ws.clock.NewTicker(ws.interval)
	defer t.Stop()
	for {
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := w.Step(sctx)
		cancel()
		if err != nil && !errors.Is(err, context.Canceled) && ctx.Err() == nil {
			w.conn.Log().Debug("quota walk", "conn", w.conn.Name, "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
	}
}
