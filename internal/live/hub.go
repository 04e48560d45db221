package live

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/keydeck/keydeck/internal/clock"
)

// MaxPollTimeout caps how long one Poll may take. A poll that outlives the
// interval would only delay the next one, so the timeout is
// min(interval, MaxPollTimeout).
const MaxPollTimeout = 5 * time.Second

// Hub runs one poller per watched topic and fans its payloads out to the
// topic's subscribers.
type Hub struct {
	// MinGap is the least time between two polls of a topic, whatever asks
	// for them: kicks (keyspace notifications, as often as the application
	// writes), ticks, or a poller restarted because subscribers left and
	// came back. It bounds what one topic costs Redis per second. Set it
	// before subscribing.
	MinGap time.Duration
	// MaxPollRate bounds the polls per second of all topics together
	// (DefaultMaxPollRate unless set; 0 means no bound): when more are
	// due, every topic's polls are spread out rather than Redis load
	// growing with the number of topics. Set it before subscribing.
	MaxPollRate float64

	ctx      context.Context
	log      *slog.Logger
	interval time.Duration
	timeout  time.Duration

	totalPolls atomic.Int64

	mu      sync.Mutex
	exited  *sync.Cond // broadcast when a poller goroutine ends; Wait sleeps on it
	running int        // poller goroutines alive
	topics  map[string]*topic
	// stopping holds, per topic name, the done channel of a poller that has
	// been told to stop but may still be inside Poll. A poller started for
	// the same topic waits on it, so polls of one topic never overlap even
	// when a subscriber arrives right after the last one left.
	stopping map[string]chan struct{}
	// lastPolls holds when stopped topics last polled, so a poller started
	// again for the same topic keeps MinGap too: subscribing and leaving in
	// a loop must not poll faster than kicks may.
	lastPolls map[string]time.Time
	budget    *budget // built by the first start from MaxPollRate; nil: no bound
	clock     clock.Clock
}

// topic is one poller's lifetime: it is created by the first subscriber and
// discarded when the last one leaves, so a later subscriber always starts
// from a clean state instead of reviving a half-stopped poller.
type topic struct {
	name   string
	src    Source
	ctx    context.Context // cancelled when the topic stops or the hub ends
	cancel context.CancelFunc
	kick   chan struct{} // capacity 1, so kicks before the next poll coalesce
	done   chan struct{} // closed when the poller goroutine returns
	polls  atomic.Int64

	// Written only by the poller goroutine, under Hub.mu so that Subscribe
	// can hand the latest payload to a newcomer; the poller reads it freely.
	latest    []byte
	hasLatest bool

	// Guarded by Hub.mu.
	subs    map[*Outbox]int // refcount: one outbox may subscribe twice
	snap    []*Outbox       // fan-out snapshot; nil means rebuild
	stopped bool
}

// Stats is a point-in-time view of the hub.
type Stats struct {
	// Running is the number of poller goroutines alive. A poller that has
	// just lost its last subscriber counts until its in-flight Poll returns.
	Running int
	// Subscribers is the number of distinct outboxes per topic.
	Subscribers map[string]int
	// Polls is the number of polls per topic since its current poller
	// started (a topic restarted after going idle counts from zero).
	Polls map[string]int64
	// TotalPolls counts every poll the hub has performed.
	TotalPolls int64
}

// New makes a hub whose pollers all stop when ctx is cancelled. interval is
// the default poll interval. A nil log discards.
func New(ctx context.Context, log *slog.Logger, interval time.Duration, opts ...Option) *Hub {
	if interval <= 0 {
		panic("live: poll interval must be positive")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	h := &Hub{
		MaxPollRate: DefaultMaxPollRate,
		ctx:         ctx,
		log:         log,
		interval:    interval,
		timeout:     min(interval, MaxPollTimeout),
		topics:      map[string]*topic{},
		stopping:    map[string]chan struct{}{},
		lastPolls:   map[string]time.Time{},
	}
	for _, o := range opts {
		o(h)
	}
	h.clock = clock.Or(h.clock)
	h.exited = sync.NewCond(&h.mu)
	return h
}

// Option sets up a hub.
type Option func(*Hub)

// WithClock runs the hub's intervals, gaps and poll budget on c (the wall
// clock without).
func WithClock(c clock.Clock) Option { return func(h *Hub) { h.clock = c } }

// Subscribe adds sink to topic. newSource is called only when the topic has
// no poller yet (first subscriber); it runs under the hub lock, so it must be
// cheap and must not call back into the hub. If the topic already has a
// payload, sink receives it before Subscribe returns, without a new poll.
// The returned func unsubscribes (idempotent). After it returns, sink may
// still receive one payload that was already being fanned out.
func (h *Hub) Subscribe(name string, newSource func() Source, sink *Outbox) (unsubscribe func()) {
	t := h.subscribe(name, newSource, sink)

	var once sync.Once
	return func() { once.Do(func() { h.unsubscribe(t, sink) }) }
}

// subscribe is Subscribe under the hub lock, released even when newSource
// panics (a page whose worker is missing must not hang every live view).
func (h *Hub) subscribe(name string, newSource func() Source, sink *Outbox) *topic {
	h.mu.Lock()
	defer h.mu.Unlock()
	t := h.topics[name]
	if t == nil {
		t = h.start(name, newSource())
	}
	t.subs[sink]++
	t.snap = nil
	// Under the lock, so a concurrent fan-out of a newer payload cannot be
	// overwritten by this older one.
	if t.hasLatest {
		sink.Put(name, t.latest)
	}
	return t
}

func (h *Hub) unsubscribe(t *topic, sink *Outbox) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if t.subs[sink]--; t.subs[sink] <= 0 {
		delete(t.subs, sink)
		t.snap = nil
	}
	if len(t.subs) > 0 || t.stopped {
		return
	}
	t.stopped = true
	t.cancel()
	if h.topics[t.name] == t {
		delete(h.topics, t.name)
	}
	select {
	case <-t.done: // already gone (hub ended); nothing for a successor to wait on
	default:
		h.stopping[t.name] = t.done
	}
}

// start registers a topic and launches its poller. Called with h.mu held.
func (h *Hub) start(name string, src Source) *topic {
	if h.budget == nil && h.MaxPollRate > 0 {
		// Bursts of a tenth of a second's budget: a page opening several
		// topics at once is not made to wait.
		h.budget = newBudget(h.MaxPollRate, max(1, int(h.MaxPollRate/10)), h.clock)
	}
	ctx, cancel := context.WithCancel(h.ctx)
	t := &topic{
		name:   name,
		src:    src,
		ctx:    ctx,
		cancel: cancel,
		kick:   make(chan struct{}, 1),
		done:   make(chan struct{}),
		subs:   map[*Outbox]int{},
	}
	h.topics[name] = t
	prev := h.stopping[name]
	h.running++
	go h.run(t, prev)
	return t
}

// Kick asks the topic's poller (if running) to poll now instead of waiting
// for the tick. It never blocks; kicks that arrive before the poll coalesce,
// and a kick during a poll causes exactly one more poll, since the data may
// have changed after that poll read it.
func (h *Hub) Kick(name string) {
	h.mu.Lock()
	t := h.topics[name]
	h.mu.Unlock()
	if t == nil {
		return
	}
	select {
	case t.kick <- struct{}{}:
	default:
	}
}

// Stats returns a snapshot of pollers, subscribers and poll counts.
func (h *Hub) Stats() Stats {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := Stats{
		Running:     h.running,
		Subscribers: make(map[string]int, len(h.topics)),
		Polls:       make(map[string]int64, len(h.topics)),
		TotalPolls:  h.totalPolls.Load(),
	}
	for name, t := range h.topics {
		s.Subscribers[name] = len(t.subs)
		s.Polls[name] = t.polls.Load()
	}
	return s
}

// Wait blocks until no poller goroutine is running. Call it after cancelling
// the hub's ctx; before that it also returns once every topic has lost its
// subscribers.
func (h *Hub) Wait() {
	h.mu.Lock()
	for h.running > 0 {
		h.exited.Wait()
	}
	h.mu.Unlock()
}

func (h *Hub) run(t *topic, prev <-chan struct{}) {
	var lastPoll time.Time
	defer func() {
		// A source holding resources (a sweeper it acquired) lets go of them
		// when its last subscriber has left.
		if c, ok := t.src.(io.Closer); ok {
			_ = c.Close()
		}
		// Before done closes: a successor reads it as soon as done closes.
		h.mu.Lock()
		h.rememberPoll(t.name, lastPoll)
		h.mu.Unlock()
		close(t.done)
		h.mu.Lock()
		h.running--
		if h.stopping[t.name] == t.done {
			delete(h.stopping, t.name)
		}
		h.exited.Broadcast()
		h.mu.Unlock()
	}()
	// Wait even if already stopped: our done must not close while an older
	// poller is still polling, or the next one in the chain would overlap it.
	if prev != nil {
		<-prev
	}
	h.mu.Lock()
	lastPoll = h.lastPolls[t.name]
	delete(h.lastPolls, t.name)
	h.mu.Unlock()

	// Poll at once (MinGap allowing): the first subscriber should not
	// stare at an empty page for a whole interval.
	if !h.keepGap(t, lastPoll) {
		return
	}
	h.poll(t)
	lastPoll = h.clock.Now()
	tick := h.clock.NewTicker(h.interval)
	defer tick.Stop()
	for {
		select {
		case <-t.ctx.Done():
			return
		case <-tick.C():
		case <-t.kick:
		}
		if !h.keepGap(t, lastPoll) {
			return
		}
		// A kicked poll is fresh; a tick right after it would be waste.
		tick.Reset(h.interval)
		h.poll(t)
		lastPoll = h.clock.Now()
	}
}

// keepGap waits until MinGap has passed since last; false if the topic
// stopped meanwhile.
func (h *Hub) keepGap(t *topic, last time.Time) bool {
	wait := h.MinGap - h.clock.Since(last)
	if last.IsZero() || wait <= 0 {
		return t.ctx.Err() == nil
	}
	gap := h.clock.NewTimer(wait)
	defer gap.Stop()
	select {
	case <-t.ctx.Done():
		return false
	case <-gap.C():
		return true
	}
}

// rememberPoll records a stopped topic's last poll for a successor.
// Called with h.mu held. Entries older than MinGap constrain nothing, so
// they are dropped whenever the map grows, which keeps it as small as the
// topics stopped within the last MinGap.
func (h *Hub) rememberPoll(name string, at time.Time) {
	if h.MinGap <= 0 || at.IsZero() {
		return
	}
	if len(h.lastPolls) >= 256 {
		for n, t := range h.lastPolls {
			if h.clock.Since(t) >= h.MinGap {
				delete(h.lastPolls, n)
			}
		}
	}
	h.lastPolls[name] = at
}

func (h *Hub) poll(t *topic) {
	if t.ctx.Err() != nil {
		return
	}
	if h.budget != nil && h.budget.wait(t.ctx) != nil {
		return // stopped while waiting its turn
	}
	b, err := h.pollSource(t)
	// Counted after fan-out, so a test that sees the count has also seen
	// the delivery.
	defer func() {
		t.polls.Add(1)
		h.totalPolls.Add(1)
	}()
	if err != nil {
		if t.ctx.Err() == nil {
			h.log.Debug("live: poll failed", "topic", t.name, "err", err)
		}
		return
	}
	if t.hasLatest && bytes.Equal(t.latest, b) {
		return
	}
	// Copy so the source may reuse its buffer and subscribers can never
	// observe a payload changing under them.
	b = bytes.Clone(b)
	if b == nil {
		b = []byte{}
	}

	h.mu.Lock()
	if t.stopped {
		h.mu.Unlock()
		return
	}
	t.latest, t.hasLatest = b, true
	if t.snap == nil {
		t.snap = make([]*Outbox, 0, len(t.subs))
		for o := range t.subs {
			t.snap = append(t.snap, o)
		}
	}
	subs := t.snap
	h.mu.Unlock()

	// Outside the lock: Put never blocks, but 1000 subscribers should not
	// hold up Subscribe/Kick callers either.
	for _, o := range subs {
		o.Put(t.name, b)
	}
}

func (h *Hub) pollSource(t *topic) (b []byte, err error) {
	ctx, cancel := context.WithTimeout(t.ctx, h.timeout)
	defer cancel()
	// A panicking source would otherwise take the whole server down with it.
	defer func() {
		if r := recover(); r != nil {
			h.log.Error("live: source panicked", "topic", t.name, "panic", r)
			err = fmt.Errorf("source panicked: %v", r)
		}
	}()
	return t.src.Poll(ctx)
}
