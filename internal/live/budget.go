package live

import (
	"context"
	"time"

	"github.com/keydeck/keydeck/internal/clock"
)

// DefaultMaxPollRate is a hub's poll budget unless MaxPollRate is set: far
// above what the console's topic cap polls at the default 1 s interval
// (500 topics, 500 polls/s), so it binds only when something goes wrong —
// short intervals, a storm of kicks, topics churning — and then bounds what
// the console can cost Redis instead of growing with it.
const DefaultMaxPollRate = 2000

// budget spreads polls over time: at most rate per second over all topics,
// in bursts of at most burst (a generic cell rate algorithm). Pollers take
// turns in arrival order (goroutines blocked on a channel queue FIFO) and
// only the one whose turn it is sleeps; one that gives up, its topic
// stopped, costs nothing, so topics churning cannot push every other
// topic's polls into the future.
type budget struct {
	turn  chan struct{} // holds one token: the right to take the next poll slot
	every time.Duration // 1/rate
	tol   time.Duration // how far ahead of schedule a burst may run: (burst-1) × every
	tat   time.Time     // the next slot's theoretical time; only the turn holder touches it
	clock clock.Clock
}

func newBudget(rate float64, burst int, clk clock.Clock) *budget {
	b := &budget{
		clock: clock.Or(clk),
		turn:  make(chan struct{}, 1),
		every: time.Duration(float64(time.Second) / rate),
	}
	b.tol = time.Duration(max(burst-1, 0)) * b.every
	b.turn <- struct{}{}
	return b
}

// wait blocks until one more poll fits the budget, or ctx ends.
func (b *budget) wait(ctx context.Context) error {
	select {
	case <-b.turn:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { b.turn <- struct{}{} }()
	now := b.clock.Now()
	tat := b.tat
	if tat.Before(now) {
		tat = now
	}
	if d := tat.Sub(now) - b.tol; d > 0 {
		t := b.clock.NewTimer(d)
		select {
		case <-t.C():
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
	b.tat = tat.Add(b.every)
	return nil
}
