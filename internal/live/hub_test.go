package live

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/redistest"
)

func TestManySubscribersOnePoller(t *testing.T) {
	const interval = 20 * time.Millisecond
	h := newHub(t, interval)
	src := &counter{}
	src.value.Store(7)
	var made atomic.Int64
	newSource := func() Source { made.Add(1); return src }

	start := time.Now()
	readers := make([]*reader, 100)
	for i := range readers {
		readers[i] = startReader(t)
	}
	var wg sync.WaitGroup
	for _, r := range readers {
		wg.Go(func() { h.Subscribe("overview:a", newSource, r.box) })
	}
	wg.Wait()

	for i, r := range readers {
		waitFor(t, fmt.Sprintf("reader %d to get the payload", i), func() bool {
			v, _ := r.latest("overview:a")
			return v == "7"
		})
	}
	// Let the poller tick a few times; the bound below is computed from
	// the time actually elapsed, so a slow machine cannot fail it.
	waitFor(t, "10 polls", func() bool { return src.calls.Load() >= 10 })

	st := h.Stats()
	ticks := int64(time.Since(start) / interval)
	polls := src.calls.Load()
	if polls < 1 || polls > ticks+2 {
		t.Errorf("polls = %d over %d ticks, want 1..%d", polls, ticks, ticks+2)
	}
	if made.Load() != 1 {
		t.Errorf("newSource called %d times, want 1", made.Load())
	}
	if st.Running != 1 || st.Subscribers["overview:a"] != 100 {
		t.Errorf("Stats = %+v, want 1 running, 100 subscribers", st)
	}
	// The payload never changed, so nobody got it twice.
	for i, r := range readers {
		if got := r.payloads("overview:a"); len(got) != 1 {
			t.Errorf("reader %d got %q, want one payload", i, got)
		}
	}
}

func TestStalledSubscriberDoesNotDelayOthers(t *testing.T) {
	h := newHub(t, time.Hour) // only kicks poll, so every value is observable
	src := &counter{}
	stalled := NewOutbox() // nobody ever Takes from it
	h.Subscribe("t", src.source(), stalled)
	active := make([]*reader, 10)
	for i := range active {
		active[i] = startReader(t)
		h.Subscribe("t", src.source(), active[i].box)
	}

	const last = 50
	for v := 1; v <= last; v++ {
		src.value.Store(int64(v))
		h.Kick("t")
		want := strconv.Itoa(v)
		for i, r := range active {
			waitFor(t, fmt.Sprintf("active reader %d to get %s", i, want), func() bool {
				got, _ := r.latest("t")
				return got == want
			})
		}
	}

	for i, r := range active {
		got := r.payloads("t")
		// Values 1..last each arrived; a leading "0" is the first poll if it
		// raced the Subscribe calls.
		if len(got) > 0 && got[0] == "0" {
			got = got[1:]
		}
		if len(got) != last {
			t.Errorf("active reader %d got %d payloads, want %d: %q", i, len(got), last, got)
		}
	}
	msgs := stalled.Take()
	if len(msgs) != 1 || msgs[0].Topic != "t" || string(msgs[0].Payload) != strconv.Itoa(last) {
		t.Errorf("stalled outbox holds %q, want exactly the newest payload %d", msgs, last)
	}
	if stalled.Coalesced() < last-1 {
		t.Errorf("stalled Coalesced = %d, want >= %d", stalled.Coalesced(), last-1)
	}
}

func TestPollerStopsAndRestarts(t *testing.T) {
	const interval = 5 * time.Millisecond
	h := newHub(t, interval)
	src := &counter{}
	var made atomic.Int64
	newSource := func() Source { made.Add(1); return src }

	r1, r2 := startReader(t), startReader(t)
	unsub1 := h.Subscribe("t", newSource, r1.box)
	unsub2 := h.Subscribe("t", newSource, r2.box)
	waitFor(t, "a few polls", func() bool { return src.calls.Load() >= 3 })

	unsub1()
	unsub1() // idempotent: must not drop r2's subscription
	if st := h.Stats(); st.Subscribers["t"] != 1 {
		t.Fatalf("after one unsubscribe: %+v, want 1 subscriber", st)
	}
	before := src.calls.Load()
	waitFor(t, "polling to continue for the remaining subscriber", func() bool { return src.calls.Load() > before+2 })

	unsub2()
	waitFor(t, "the poller to stop", func() bool { return h.Stats().Running == 0 })
	if st := h.Stats(); len(st.Subscribers) != 0 {
		t.Errorf("idle hub still lists topics: %+v", st)
	}
	stopped := src.calls.Load()
	redistest.Never(t, 10*interval, "a poll after the last unsubscribe", func() bool { return src.calls.Load() != stopped })

	src.value.Store(42)
	r3 := startReader(t)
	h.Subscribe("t", newSource, r3.box)
	waitFor(t, "the restarted poller to deliver", func() bool {
		v, _ := r3.latest("t")
		return v == "42"
	})
	if st := h.Stats(); st.Running != 1 {
		t.Errorf("after restart: %+v, want 1 running", st)
	}
	if made.Load() != 2 {
		t.Errorf("newSource called %d times, want 2 (start and restart)", made.Load())
	}
}

var errNothing = errors.New("nothing")

// script is a Source returning one scripted result per poll.
type script struct {
	steps []any // string payload or error
	n     atomic.Int64
}

func (s *script) Poll(context.Context) ([]byte, error) {
	i := int(s.n.Add(1)) - 1
	if i >= len(s.steps) {
		i = len(s.steps) - 1
	}
	switch v := s.steps[i].(type) {
	case error:
		return nil, v
	default:
		return []byte(v.(string)), nil
	}
}

func TestOnlyChangedPayloadsAreSent(t *testing.T) {
	tests := []struct {
		name  string
		polls []any
		sent  []string
	}{
		{"unchanged", []any{"a", "a", "a"}, []string{"a"}},
		{"changed", []any{"a", "b", "c"}, []string{"a", "b", "c"}},
		{"back and forth", []any{"a", "b", "b", "a"}, []string{"a", "b", "a"}},
		{"empty first payload is sent", []any{"", "", "x"}, []string{"", "x"}},
		{"error keeps last payload", []any{"a", errNothing, "a", "b"}, []string{"a", "b"}},
		{"error first", []any{errNothing, "a"}, []string{"a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHub(t, time.Hour)
			src := &script{steps: tt.polls}
			box := NewOutbox()
			h.Subscribe("t", func() Source { return src }, box)
			var sent []string
			for i := range tt.polls {
				if i > 0 {
					h.Kick("t")
				}
				// Polls are counted after fan-out, so the payload (if any)
				// is in the outbox once the count moves.
				waitFor(t, fmt.Sprintf("poll %d", i+1), func() bool { return h.Stats().Polls["t"] == int64(i+1) })
				for _, m := range box.Take() {
					sent = append(sent, string(m.Payload))
				}
			}
			if !reflect.DeepEqual(sent, tt.sent) {
				t.Errorf("sent %q, want %q", sent, tt.sent)
			}
		})
	}
}

func TestKickPollsNow(t *testing.T) {
	h := newHub(t, time.Hour)
	h.Kick("nobody") // no poller: must neither block nor start one

	entered, release := make(chan struct{}), make(chan struct{})
	var calls atomic.Int64
	src := SourceFunc(func(ctx context.Context) ([]byte, error) {
		n := calls.Add(1)
		if n == 2 {
			close(entered)
			<-release
		}
		return []byte(strconv.FormatInt(n, 10)), nil
	})
	r := startReader(t)
	h.Subscribe("t", func() Source { return src }, r.box)
	waitFor(t, "the immediate first poll", func() bool { return calls.Load() == 1 })

	h.Kick("t")
	select {
	case <-entered:
	case <-time.After(5 * time.Second):
		t.Fatal("Kick did not trigger a poll before the 1h interval")
	}
	// Kicks while a poll runs coalesce into one follow-up poll.
	for range 10 {
		h.Kick("t")
	}
	close(release)
	waitFor(t, "the follow-up poll to deliver", func() bool {
		v, _ := r.latest("t")
		return v == "3"
	})
	redistest.Never(t, 20*time.Millisecond, "a fourth poll (want first, kicked, one coalesced follow-up)", func() bool { return calls.Load() > 3 })
	if n := calls.Load(); n != 3 {
		t.Errorf("polls = %d, want 3 (first, kicked, one coalesced follow-up)", n)
	}
	if h.Stats().Running != 1 {
		t.Error("Kick on an unknown topic started a poller")
	}
}

func TestLateSubscriberGetsLatestWithoutPolling(t *testing.T) {
	h := newHub(t, time.Hour)
	src := &counter{}
	src.value.Store(5)
	first := startReader(t)
	h.Subscribe("t", src.source(), first.box)
	waitFor(t, "the first payload", func() bool { _, ok := first.latest("t"); return ok })

	late := NewOutbox()
	h.Subscribe("t", func() Source { t.Error("newSource called for a running topic"); return src }, late)
	msgs := late.Take() // delivered synchronously by Subscribe
	if len(msgs) != 1 || string(msgs[0].Payload) != "5" {
		t.Errorf("late subscriber got %q, want the latest payload 5", msgs)
	}
	if n := src.calls.Load(); n != 1 {
		t.Errorf("polls = %d, want 1: the late subscriber must reuse the latest payload", n)
	}
}

func TestCancelStopsAllPollers(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	h := New(ctx, nil, time.Millisecond)
	srcs := make([]*counter, 5)
	for i := range srcs {
		srcs[i] = &counter{}
		h.Subscribe(fmt.Sprint("t", i), srcs[i].source(), NewOutbox())
	}
	waitFor(t, "all pollers to run", func() bool { return h.Stats().Running == 5 })
	cancel()

	waited := make(chan struct{})
	go func() { h.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(5 * time.Second):
		t.Fatal("Wait did not return after cancel")
	}
	if st := h.Stats(); st.Running != 0 {
		t.Errorf("Running = %d after Wait, want 0", st.Running)
	}
	// Subscribing to a dead hub must not leave a goroutine behind.
	unsub := h.Subscribe("late", (&counter{}).source(), NewOutbox())
	h.Wait()
	unsub()
	was := make([]int64, len(srcs))
	for i, s := range srcs {
		was[i] = s.calls.Load()
	}
	redistest.Never(t, 25*time.Millisecond, "a source polled after cancel", func() bool {
		for i, s := range srcs {
			if s.calls.Load() != was[i] {
				return true
			}
		}
		return false
	})
}

// Subscribers churning on one topic must never leave a subscribed topic
// without a poller, nor run two polls of the topic at once.
func TestConcurrentSubscribeUnsubscribe(t *testing.T) {
	h := newHub(t, time.Millisecond)
	src := &counter{delay: 200 * time.Microsecond}
	var wg sync.WaitGroup
	for g := range 50 {
		wg.Go(func() {
			box := NewOutbox()
			for i := range 200 {
				unsub := h.Subscribe("t", src.source(), box)
				if i%3 == g%3 {
					h.Kick("t")
				}
				unsub()
			}
		})
	}
	wg.Wait()
	waitFor(t, "every poller to stop", func() bool { return h.Stats().Running == 0 })

	// After the churn, a fresh subscriber still gets a live poller.
	src.value.Store(99)
	r := startReader(t)
	unsub := h.Subscribe("t", src.source(), r.box)
	waitFor(t, "payload after churn", func() bool { v, _ := r.latest("t"); return v == "99" })
	if st := h.Stats(); st.Running != 1 || st.Subscribers["t"] != 1 {
		t.Errorf("Stats = %+v, want 1 running with 1 subscriber", st)
	}
	unsub()
	waitFor(t, "the poller to stop", func() bool { return h.Stats().Running == 0 })
	if src.overlap.Load() {
		t.Error("two polls of one topic overlapped")
	}
}

func TestSourcePanicIsContained(t *testing.T) {
	h := newHub(t, time.Hour)
	var calls atomic.Int64
	src := SourceFunc(func(context.Context) ([]byte, error) {
		if calls.Add(1) == 1 {
			panic("boom")
		}
		return []byte("ok"), nil
	})
	r := startReader(t)
	h.Subscribe("t", func() Source { return src }, r.box)
	waitFor(t, "the panicking poll", func() bool { return calls.Load() == 1 })
	h.Kick("t")
	waitFor(t, "the poller to survive the panic", func() bool { v, _ := r.latest("t"); return v == "ok" })
}

type closingSource struct {
	closed chan struct{}
}

func (c *closingSource) Poll(context.Context) ([]byte, error) { return []byte("x"), nil }
func (c *closingSource) Close() error                         { close(c.closed); return nil }

// A source that holds resources is closed once its last subscriber leaves.
func TestSourceClosedWhenPollerStops(t *testing.T) {
	h := New(t.Context(), nil, time.Hour)
	src := &closingSource{closed: make(chan struct{})}
	unsub := h.Subscribe("t", func() Source { return src }, NewOutbox())
	select {
	case <-src.closed:
		t.Fatal("closed while subscribed")
	case <-time.After(50 * time.Millisecond):
	}
	unsub()
	select {
	case <-src.closed:
	case <-time.After(5 * time.Second):
		t.Fatal("source not closed after the last unsubscribe")
	}
}

// However often kicks come, a topic is polled at most once per MinGap.
func TestKicksRespectMinGap(t *testing.T) {
	h := New(t.Context(), nil, time.Hour)
	h.MinGap = 50 * time.Millisecond
	var polls atomic.Int64
	unsub := h.Subscribe("t", func() Source {
		return SourceFunc(func(context.Context) ([]byte, error) { polls.Add(1); return []byte("x"), nil })
	}, NewOutbox())
	defer unsub()
	stop := time.Now().Add(500 * time.Millisecond)
	for time.Now().Before(stop) { // kicks as often as they can come
		h.Kick("t")
		runtime.Gosched()
	}
	// 1 initial poll + at most one per 50 ms over 500 ms (+1 for edges).
	if n := polls.Load(); n > 12 || n < 3 {
		t.Fatalf("%d polls for 500 ms of constant kicks with a 50 ms gap", n)
	}
}

// A topic whose source cannot be built (newSource panics: a page whose
// worker is missing) must not leave the hub locked: every other live view
// of the console would hang on its next Subscribe.
func TestPanickingSourceLeavesTheHubUsable(t *testing.T) {
	h := newHub(t, time.Hour)
	func() {
		defer func() { _ = recover() }()
		h.Subscribe("broken", func() Source { panic("no worker") }, NewOutbox())
	}()
	done := make(chan struct{})
	go func() {
		src := &counter{}
		h.Subscribe("t", src.source(), NewOutbox())
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second): // a deadlock's bound, not a wait
		t.Fatal("Subscribe hangs after a source panicked")
	}
}
