package linger

import (
	"context"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/clock"
)

// worker records its runs: started, then stopped when its context ends.
type worker struct {
	id      int
	stopped chan struct{}
}

type harness struct {
	t       *testing.T
	clk     *clock.Fake
	cancel  context.CancelFunc
	pool    *Pool[string, *worker]
	started int
	told    []string // Stopped calls
}

const lingerFor = time.Minute

func newHarness(t *testing.T) *harness {
	h := &harness{t: t, clk: clock.NewFake(time.Time{})}
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	h.pool = New(ctx, lingerFor, h.clk, Hooks[string, *worker]{
		Run: func(ctx context.Context, _ string, w *worker) {
			<-ctx.Done()
			close(w.stopped)
		},
		Stopped: func(k string, _ *worker) { h.told = append(h.told, k) },
	})
	t.Cleanup(func() { cancel(); h.pool.Wait() })
	return h
}

func (h *harness) acquire(k string) (*worker, func()) {
	return h.pool.Acquire(k, func() *worker {
		h.started++
		return &worker{id: h.started, stopped: make(chan struct{})}
	})
}

func stoppedSoon(t *testing.T, w *worker) {
	t.Helper()
	select {
	case <-w.stopped:
	case <-time.After(10 * time.Second):
		t.Fatalf("worker %d still runs", w.id)
	}
}

func running(w *worker) bool {
	select {
	case <-w.stopped:
		return false
	default:
		return true
	}
}

func TestPool(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, h *harness)
	}{
		{"one worker per key however many acquire it", func(t *testing.T, h *harness) {
			a, relA := h.acquire("x")
			b, relB := h.acquire("x")
			c, relC := h.acquire("y")
			defer relA()
			defer relB()
			defer relC()
			if a != b || a == c || h.started != 2 || h.pool.Running() != 2 {
				t.Fatalf("a %d b %d c %d, started %d, running %d", a.id, b.id, c.id, h.started, h.pool.Running())
			}
		}},
		{"runs on while another holds it", func(t *testing.T, h *harness) {
			w, relA := h.acquire("x")
			_, relB := h.acquire("x")
			relA()
			relA() // release is idempotent
			h.clk.Advance(10 * lingerFor)
			if !running(w) || h.pool.Running() != 1 || h.clk.Waiters() != 0 {
				t.Fatalf("running %v, pool %d, timers %d", running(w), h.pool.Running(), h.clk.Waiters())
			}
			relB()
		}},
		{"lingers, then stops", func(t *testing.T, h *harness) {
			w, rel := h.acquire("x")
			rel()
			h.clk.Advance(lingerFor - time.Nanosecond)
			if !running(w) || h.pool.Running() != 1 {
				t.Fatal("stopped before its linger ran out")
			}
			h.clk.Advance(time.Nanosecond)
			stoppedSoon(t, w)
			if h.pool.Running() != 0 || len(h.told) != 1 || h.told[0] != "x" {
				t.Fatalf("running %d, told %v", h.pool.Running(), h.told)
			}
			if _, ok := h.pool.Get("x"); ok {
				t.Fatal("Get finds a stopped worker")
			}
		}},
		{"re-acquired while lingering: the same worker, the linger cancelled", func(t *testing.T, h *harness) {
			w, rel := h.acquire("x")
			rel()
			h.clk.Advance(lingerFor / 2)
			again, rel2 := h.acquire("x")
			if again != w || h.started != 1 || h.clk.Waiters() != 0 {
				t.Fatalf("worker %d (was %d), started %d, timers %d", again.id, w.id, h.started, h.clk.Waiters())
			}
			h.clk.Advance(10 * lingerFor)
			if !running(w) {
				t.Fatal("the old linger stopped a held worker")
			}
			rel2()
			h.clk.Advance(lingerFor)
			stoppedSoon(t, w)
		}},
		{"acquired after it stopped: a new worker", func(t *testing.T, h *harness) {
			w, rel := h.acquire("x")
			rel()
			h.clk.Advance(lingerFor)
			stoppedSoon(t, w)
			w2, rel2 := h.acquire("x")
			defer rel2()
			if w2 == w || h.started != 2 {
				t.Fatalf("worker %d after %d, started %d", w2.id, w.id, h.started)
			}
			if got, ok := h.pool.Get("x"); !ok || got != w2 {
				t.Fatal("Get does not find the running worker")
			}
		}},
		{"the pool's context ending stops every worker, held or not", func(t *testing.T, h *harness) {
			a, _ := h.acquire("x")
			b, rel := h.acquire("y")
			rel()
			h.cancel()
			h.pool.Wait()
			if running(a) || running(b) {
				t.Fatal("workers run after the pool's context ended")
			}
			if len(h.told) != 0 {
				t.Fatalf("Stopped told of %v: only a linger running out tells", h.told)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, newHarness(t)) })
	}
}
