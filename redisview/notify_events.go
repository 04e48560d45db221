package redisview

import (
	"context"
	"sync"
)

// keyEvents is a connection's consumers of keyspace events, all fed by one
// subscription (runKeyspace): it runs while at least one consumer is
// registered, so a PSUBSCRIBE is opened once per connection (per primary of
// a cluster) whoever listens.
type keyEvents struct {
	// mu guards the fields below; dispatch holds it for reading while it
	// calls the consumers, so that once remove returns a consumer is not
	// called again.
	mu     sync.RWMutex
	subs   map[int]keyEventSub
	next   int
	on     bool // a confirmed subscription is up
	closed bool // the connection was closed: no new runner
	// cancel ends the runner; done is closed when it has returned.
	cancel context.CancelFunc
	done   chan struct{}
}

type keyEventSub struct {
	ev    func(db int, key, event string)
	state func(subscribed bool)
}

// OnKeyEvent calls ev with every keyspace event the server publishes — the
// database, the key (byte for byte) and the event's name ("new", "set",
// "del", "expired", "rename_from"…) — until remove is called. It shares the
// connection's one subscription with WatchKeyspace and every other
// consumer, starting it if ev is the first: the subscription runs while
// any consumer is registered, and is opened only while the server has
// keyspace events on (notify-keyspace-events with K, re-read like
// WatchKeyspace does; a consumer that needs them soon after an operator
// turns them on holds WantKeyspace too).
//
// state, when not nil, says whether the events are complete: state(true)
// when a confirmed subscription starts (at once if one is up when
// OnKeyEvent is called), state(false) when it ends. Events between a
// state(false) and the next state(true) are lost — a consumer that counts
// must start over. Events are delivered in the server's order, each
// command's together.
//
// ev and state run on the subscription's goroutine: they must be cheap and
// must not block, nor call remove. Once remove returns they are not called
// again.
func (c *Conn) OnKeyEvent(ev func(db int, key, event string), state func(subscribed bool)) (remove func()) {
	k := &c.kev
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.subs == nil {
		k.subs = map[int]keyEventSub{}
	}
	id := k.next
	k.next++
	k.subs[id] = keyEventSub{ev, state}
	if k.on && state != nil {
		state(true)
	}
	if len(k.subs) == 1 && !k.closed {
		k.start(c)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			k.mu.Lock()
			delete(k.subs, id)
			var done chan struct{}
			if len(k.subs) == 0 && k.cancel != nil {
				k.cancel()
				k.cancel, done = nil, k.done
			}
			k.mu.Unlock()
			if done != nil {
				// The last consumer: the subscription is closed when remove
				// returns.
				<-done
			}
		})
	}
}

// start runs the subscription for the registered consumers; it waits for
// a previous runner to end first, so that two never overlap (each
// consumer would hear every event twice). Called with k.mu held.
func (k *keyEvents) start(c *Conn) {
	prev := k.done
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	k.cancel, k.done = cancel, done
	go func() {
		defer close(done)
		if prev != nil {
			<-prev
		}
		c.runKeyspace(ctx)
	}()
}

// dispatch hands an event to every consumer.
func (k *keyEvents) dispatch(db int, key, event string) {
	k.mu.RLock()
	defer k.mu.RUnlock()
	for _, s := range k.subs {
		s.ev(db, key, event)
	}
}

// subscribed tells the consumers that the subscription started or ended.
func (k *keyEvents) subscribed(on bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.on = on
	for _, s := range k.subs {
		if s.state != nil {
			s.state(on)
		}
	}
}

// close ends the subscription for good (the connection is closed) and
// waits for it.
func (k *keyEvents) close() {
	k.mu.Lock()
	k.closed = true
	cancel, done := k.cancel, k.done
	k.cancel = nil
	k.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}
