package server

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview"
)

// A watch follows one channel (SUBSCRIBE) or pattern (PSUBSCRIBE) on one
// server for the people looking at it. A busy channel would otherwise
// flood their pages: it keeps at most Rate messages a second, the newest
// Keep of them, and counts the rest as dropped.

// Watch defaults.
const (
	WatchRate       = 50
	WatchKeep       = 100
	WatchPayloadMax = 1024
)

// WatchOptions shape a watch; zero fields take the defaults.
type WatchOptions struct {
	Pattern    bool             // PSUBSCRIBE name rather than SUBSCRIBE
	Rate       int              // messages kept per second
	Keep       int              // newest messages kept
	PayloadMax int              // bytes kept of each payload
	Now        func() time.Time // the clock that stamps and paces messages; nil: time.Now
	// OnMessage is called after each kept message and when the
	// subscription comes back or ends (from the watch's goroutine; it
	// must not block): a live page polls at once.
	OnMessage func()
}

// Message is one message received.
type Message struct {
	Channel string // bytes
	Pattern string // the pattern it matched (PSUBSCRIBE), bytes
	Payload string // its first PayloadMax bytes, exactly
	More    int    // payload bytes left off
	Time    time.Time
}

// WatchState is what a watch has seen.
type WatchState struct {
	Messages []Message // newest first
	Received int64     // every message the server sent
	Dropped  int64     // of those, not kept (over the rate)
	Since    time.Time

	// DownSince is when the subscription was seen lost (zero while it
	// holds); messages published from then until it is back are missed,
	// and how many the server never says.
	DownSince time.Time
	// LastGap is the latest span the subscription was lost and came back
	// (zero: none); Gaps counts them.
	LastGap [2]time.Time
	Gaps    int
	// Ended: the subscription is gone for good (its client was closed):
	// only a new watch sees messages again.
	Ended   bool
	LastErr string
}

// Watch is one running subscription; Close ends it.
type Watch struct {
	ps   *redis.PubSub
	opt  WatchOptions
	done chan struct{}

	mu       sync.Mutex
	msgs     []Message // ring, oldest first once full
	next     int
	received int64
	dropped  int64
	sec      int64 // the second inSec counts
	inSec    int
	since    time.Time
	down     time.Time
	gap      [2]time.Time
	gaps     int
	ended    bool
	lastErr  string
}

// StartWatch subscribes to name on cl and waits for the server to confirm.
// cl is one server's client: on a cluster a node's, which sees every
// channel's messages (the cluster passes them to every node).
func StartWatch(ctx context.Context, srv redisview.Server, name string, o WatchOptions) (*Watch, error) {
	cl := srv.Client()
	if o.Rate <= 0 {
		o.Rate = WatchRate
	}
	if o.Keep <= 0 {
		o.Keep = WatchKeep
	}
	if o.PayloadMax <= 0 {
		o.PayloadMax = WatchPayloadMax
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	var ps *redis.PubSub
	if o.Pattern {
		ps = cl.PSubscribe(ctx, name)
	} else {
		ps = cl.Subscribe(ctx, name)
	}
	if _, err := ps.Receive(ctx); err != nil {
		_ = ps.Close()
		cmd := "SUBSCRIBE"
		if o.Pattern {
			cmd = "PSUBSCRIBE"
		}
		if redisview.IsConnErr(err) {
			return nil, redisview.ReadError(cmd, err)
		}
		return nil, errors.New(redisview.Refusal(cmd, err))
	}
	w := &Watch{ps: ps, opt: o, done: make(chan struct{}), since: o.Now()}
	go w.run()
	return w, nil
}

// run takes messages until the subscription ends. go-redis reconnects a
// lost subscription by itself and subscribes again: the confirmation it
// then receives marks the end of a gap.
func (w *Watch) run() {
	defer close(w.done)
	defer func() {
		w.mu.Lock()
		w.ended = true
		if w.down.IsZero() {
			w.down = w.opt.Now()
		}
		if w.lastErr == "" {
			w.lastErr = "the subscription's connection was closed"
		}
		w.mu.Unlock()
		if w.opt.OnMessage != nil {
			w.opt.OnMessage()
		}
	}()
	for m := range w.ps.ChannelWithSubscriptions(redis.WithChannelSize(256)) {
		switch m := m.(type) {
		case *redis.Message:
			if w.take(m) && w.opt.OnMessage != nil {
				w.opt.OnMessage()
			}
		case *redis.Subscription:
			w.resubscribed()
			if w.opt.OnMessage != nil {
				w.opt.OnMessage()
			}
		}
	}
}

func (w *Watch) resubscribed() {
	now := w.opt.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	from := w.down
	if from.IsZero() {
		// Lost and back between two checks: when it broke is not known
		// closer than the last message or the start.
		from = w.since
	}
	w.gap, w.gaps, w.down, w.lastErr = [2]time.Time{from, now}, w.gaps+1, time.Time{}, ""
}

// Check asks the subscription's connection whether it still holds (a
// PING on it, which also makes go-redis reconnect a broken one) and
// records when it was first found lost.
func (w *Watch) Check(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	err := w.ps.Ping(ctx)
	w.mu.Lock()
	defer w.mu.Unlock()
	if err == nil || w.ended {
		return
	}
	if w.down.IsZero() {
		w.down = w.opt.Now()
	}
	w.lastErr = err.Error()
}

// take keeps m unless the second's share is spent; it reports whether it did.
func (w *Watch) take(m *redis.Message) bool {
	now := w.opt.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.received++
	if s := now.Unix(); s != w.sec {
		w.sec, w.inSec = s, 0
	}
	if w.inSec >= w.opt.Rate {
		w.dropped++
		return false
	}
	w.inSec++
	msg := Message{Channel: m.Channel, Pattern: m.Pattern, Payload: m.Payload, Time: now}
	if len(msg.Payload) > w.opt.PayloadMax {
		msg.More = len(msg.Payload) - w.opt.PayloadMax
		msg.Payload = msg.Payload[:w.opt.PayloadMax]
	}
	if len(w.msgs) < w.opt.Keep {
		w.msgs = append(w.msgs, msg)
		w.next = len(w.msgs) % w.opt.Keep
	} else {
		w.msgs[w.next] = msg
		w.next = (w.next + 1) % w.opt.Keep
	}
	return true
}

// State is what the watch has seen so far.
func (w *Watch) State() WatchState {
	w.mu.Lock()
	defer w.mu.Unlock()
	st := WatchState{Received: w.received, Dropped: w.dropped, Since: w.since,
		DownSince: w.down, LastGap: w.gap, Gaps: w.gaps, Ended: w.ended, LastErr: w.lastErr,
		Messages: make([]Message, 0, len(w.msgs))}
	for i := range w.msgs {
		// Newest first: walk the ring backwards from the last written.
		j := (w.next - 1 - i + 2*len(w.msgs)) % len(w.msgs)
		st.Messages = append(st.Messages, w.msgs[j])
	}
	return st
}

// Close unsubscribes and waits for the watch's goroutine to end.
func (w *Watch) Close() error {
	err := w.ps.Close()
	<-w.done
	return err
}
