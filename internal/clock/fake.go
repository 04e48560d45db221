package clock

import (
	"context"
	"sort"
	"sync"
	"time"
)

// Fake is a clock that moves only when told to (Advance). Timers, tickers
// and AfterFunc calls fall due in order of their time, each at its own
// instant; BlockUntil lets a test wait until the code under test is
// waiting on the clock, without sleeping.
type Fake struct {
	mu      sync.Mutex
	now     time.Time
	seq     int
	waiters []*fakeWaiter
	changed chan struct{} // closed and replaced whenever waiters change
}

type fakeWaiter struct {
	c      *Fake
	at     time.Time
	seq    int           // creation order: equal times fire in that order
	period time.Duration // tickers
	ch     chan time.Time
	fn     func()
	active bool
}

// NewFake returns a fake clock standing at start (a fixed instant when
// zero).
func NewFake(start time.Time) *Fake {
	if start.IsZero() {
		start = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	}
	return &Fake{now: start, changed: make(chan struct{})}
}

func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *Fake) Since(t time.Time) time.Duration { return f.Now().Sub(t) }

func (f *Fake) NewTimer(d time.Duration) Timer {
	return f.add(d, 0, make(chan time.Time, 1), nil)
}

func (f *Fake) NewTicker(d time.Duration) Ticker {
	if d <= 0 {
		panic("clock: non-positive ticker interval")
	}
	return fakeTicker{f.add(d, d, make(chan time.Time, 1), nil)}
}

func (f *Fake) AfterFunc(d time.Duration, fn func()) Timer { return f.add(d, 0, nil, fn) }

func (f *Fake) add(d, period time.Duration, ch chan time.Time, fn func()) *fakeWaiter {
	f.mu.Lock()
	defer f.mu.Unlock()
	w := &fakeWaiter{c: f, period: period, ch: ch, fn: fn}
	f.schedule(w, d)
	return w
}

// schedule (re)arms w at now+d; f.mu is held.
func (f *Fake) schedule(w *fakeWaiter, d time.Duration) {
	f.seq++
	w.at, w.seq = f.now.Add(max(d, 0)), f.seq
	if !w.active {
		w.active = true
		f.waiters = append(f.waiters, w)
	}
	f.signal()
}

// unschedule disarms w; f.mu is held. It says whether w was armed.
func (f *Fake) unschedule(w *fakeWaiter) bool {
	if !w.active {
		return false
	}
	w.active = false
	for i, x := range f.waiters {
		if x == w {
			f.waiters = append(f.waiters[:i], f.waiters[i+1:]...)
			break
		}
	}
	f.signal()
	return true
}

func (f *Fake) signal() {
	close(f.changed)
	f.changed = make(chan struct{})
}

// Advance moves the clock d forward, firing every timer that falls due on
// the way, earliest first, with the clock standing at its time. AfterFunc
// functions run in Advance's goroutine; a timer's channel receives its
// time (dropped when the last one is unread, as time.Ticker does).
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	target := f.now.Add(d)
	for {
		w := f.next(target)
		if w == nil {
			break
		}
		f.now = w.at
		if w.period > 0 {
			f.schedule(w, w.period)
		} else {
			f.unschedule(w)
		}
		now := f.now
		f.mu.Unlock()
		if w.fn != nil {
			w.fn()
		} else {
			select {
			case w.ch <- now:
			default:
			}
		}
		f.mu.Lock()
	}
	f.now = target
	f.mu.Unlock()
}

// next is the earliest waiter due by target, or nil; f.mu is held.
func (f *Fake) next(target time.Time) *fakeWaiter {
	var best *fakeWaiter
	for _, w := range f.waiters {
		if w.at.After(target) {
			continue
		}
		if best == nil || w.at.Before(best.at) || w.at.Equal(best.at) && w.seq < best.seq {
			best = w
		}
	}
	return best
}

// Waiters is the number of armed timers, tickers and AfterFunc calls.
func (f *Fake) Waiters() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.waiters)
}

// BlockUntil waits until at least n timers, tickers or AfterFunc calls are
// armed (the code under test is waiting on the clock), or ctx ends.
func (f *Fake) BlockUntil(ctx context.Context, n int) error {
	for {
		f.mu.Lock()
		have, ch := len(f.waiters), f.changed
		f.mu.Unlock()
		if have >= n {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ch:
		}
	}
}

// Deadlines lists how far ahead of now each armed waiter falls due,
// soonest first: a test can assert what the code waits for.
func (f *Fake) Deadlines() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []time.Duration
	for _, w := range f.waiters {
		out = append(out, w.at.Sub(f.now))
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func (w *fakeWaiter) C() <-chan time.Time { return w.ch }

func (w *fakeWaiter) Stop() bool {
	w.c.mu.Lock()
	defer w.c.mu.Unlock()
	w.drain()
	return w.c.unschedule(w)
}

func (w *fakeWaiter) Reset(d time.Duration) bool {
	w.c.mu.Lock()
	defer w.c.mu.Unlock()
	was := w.active
	w.drain()
	w.c.schedule(w, d)
	return was
}

// drain drops a tick delivered and not received, as Stop and Reset of a
// real timer do (Go 1.23 on).
func (w *fakeWaiter) drain() {
	if w.ch == nil {
		return
	}
	select {
	case <-w.ch:
	default:
	}
}

type fakeTicker struct{ w *fakeWaiter }

func (t fakeTicker) C() <-chan time.Time { return t.w.ch }
func (t fakeTicker) Stop()               { t.w.Stop() }
func (t fakeTicker) Reset(d time.Duration) {
	t.w.c.mu.Lock()
	defer t.w.c.mu.Unlock()
	t.w.period = d
	t.w.drain()
	t.w.c.schedule(t.w, d)
}
