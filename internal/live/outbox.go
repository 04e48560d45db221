package live

import (
	"sync"
	"sync/atomic"
)

// Message is one topic's payload ready to be written to a client.
type Message struct {
	Topic   string
	Payload []byte
}

// Outbox is one websocket client's coalescing outbox, shared by all topics it
// subscribes to. It holds at most one payload per topic: a client that reads
// slowly should see the newest state, not replay a backlog of stale ones, and
// its memory stays bounded by the number of topics it watches.
type Outbox struct {
	ready     chan struct{}
	coalesced atomic.Int64

	mu      sync.Mutex
	pending []Message
	index   map[string]int // topic -> position in pending
}

// NewOutbox returns an empty outbox.
func NewOutbox() *Outbox {
	return &Outbox{ready: make(chan struct{}, 1), index: map[string]int{}}
}

// Put queues payload for topic, replacing any payload of that topic still
// pending. It never blocks, so pollers can fan out to stalled clients. The
// payload must not be modified afterwards: the hub shares one slice among all
// subscribers.
func (o *Outbox) Put(topic string, payload []byte) {
	o.mu.Lock()
	if i, ok := o.index[topic]; ok {
		o.pending[i].Payload = payload
		o.coalesced.Add(1)
	} else {
		o.index[topic] = len(o.pending)
		o.pending = append(o.pending, Message{Topic: topic, Payload: payload})
	}
	o.mu.Unlock()
	select {
	case o.ready <- struct{}{}:
	default: // a signal is already pending; the writer will Take everything
	}
}

// Ready receives a value after Put. Signals coalesce (capacity 1), so a
// writer must drain everything with Take on each signal. A signal may arrive
// with nothing pending when an earlier Take already collected the payload.
func (o *Outbox) Ready() <-chan struct{} { return o.ready }

// Take returns the pending messages, in the order their topics first became
// pending, and clears them.
func (o *Outbox) Take() []Message {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.pending) == 0 {
		return nil
	}
	msgs := o.pending
	o.pending = nil
	clear(o.index)
	return msgs
}

// Len is the number of topics with a pending payload.
func (o *Outbox) Len() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.pending)
}

// Coalesced counts payloads that were replaced before being taken, i.e.
// updates a slow client never saw.
func (o *Outbox) Coalesced() int64 { return o.coalesced.Load() }
