package live

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/clock"
)

// One topic costs Redis at most one poll per MinGap, whatever asks for
// more: ticks faster than the gap, a storm of kicks, and a viewer leaving
// and coming back in a loop (each return used to start a poller that
// polled at once).
func TestTopicPollRateBounded(t *testing.T) {
	h := newHub(t, time.Millisecond)
	h.MinGap = 50 * time.Millisecond
	var polls atomic.Int64
	src := func() Source {
		return SourceFunc(func(context.Context) ([]byte, error) { polls.Add(1); return []byte("x"), nil })
	}
	const run = 500 * time.Millisecond
	stop := time.Now().Add(run)
	for time.Now().Before(stop) {
		unsub := h.Subscribe("t", src, NewOutbox())
		h.Kick("t")
		time.Sleep(200 * time.Microsecond) // a churning viewer's rate: real time against the real MinGap
		unsub()
	}
	waitFor(t, "the pollers to stop", func() bool { return h.Stats().Running == 0 })
	// One poll per 50 ms over 500 ms, plus one for the edges.
	if n := polls.Load(); n > int64(run/h.MinGap)+2 || n < 3 {
		t.Fatalf("%d polls of one topic in %s with a %s gap", n, run, h.MinGap)
	}
}

// All topics together poll at most MaxPollRate per second (after a burst
// of a tenth of that), and every topic still gets its turn.
func TestPollBudgetBoundsAllTopics(t *testing.T) {
	h := newHub(t, time.Millisecond)
	h.MaxPollRate = 200
	const topics = 20
	counts := make([]atomic.Int64, topics)
	var total atomic.Int64
	start := time.Now()
	for i := range topics {
		h.Subscribe(fmt.Sprint("t", i), func() Source {
			return SourceFunc(func(context.Context) ([]byte, error) {
				counts[i].Add(1)
				total.Add(1)
				return []byte("x"), nil
			})
		}, NewOutbox())
	}
	time.Sleep(500 * time.Millisecond) // a window to count the hub's polls in against its real-time budget
	n, elapsed := total.Load(), time.Since(start)
	limit := int64(h.MaxPollRate*elapsed.Seconds()) + int64(h.MaxPollRate/10) + 2
	if n > limit {
		t.Fatalf("%d polls in %s over %d topics; the budget allows %d", n, elapsed.Round(time.Millisecond), topics, limit)
	}
	if n < limit/2 {
		t.Errorf("only %d polls in %s: the budget is not used", n, elapsed)
	}
	for i := range counts {
		if counts[i].Load() < 2 {
			t.Errorf("topic %d polled %d times: starved", i, counts[i].Load())
		}
	}
}

// A topic that stops while waiting for its turn gives the turn up at no
// cost: churn cannot push other topics' polls into the future.
func TestBudgetWaitersThatLeaveCostNothing(t *testing.T) {
	clk := clock.NewFake(time.Time{})
	b := newBudget(10, 1, clk) // one poll per 100 ms
	ctx := t.Context()
	if err := b.wait(ctx); err != nil {
		t.Fatal(err)
	}
	for range 100 {
		gone, cancel := context.WithCancel(ctx)
		cancel()
		_ = b.wait(gone)
	}
	done := make(chan error, 1)
	go func() { done <- b.wait(ctx) }()
	bctx, stop := context.WithTimeout(ctx, 10*time.Second)
	defer stop()
	if err := clk.BlockUntil(bctx, 1); err != nil {
		t.Fatalf("the next poll does not wait for its slot: %v", err)
	}
	if d := clk.Deadlines(); len(d) != 1 || d[0] > 100*time.Millisecond {
		t.Fatalf("the next poll waits %v behind 100 waiters that had left, want its slot 100 ms on", d)
	}
	clk.Advance(100 * time.Millisecond)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
