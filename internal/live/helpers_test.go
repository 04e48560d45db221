package live

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/redistest"
)

// waitFor polls cond until it holds or a generous deadline passes; the
// deadline only bounds a failure, it never decides a pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	redistest.Eventually(t, 5*time.Second, what, cond)
}

func newHub(t *testing.T, interval time.Duration) *Hub {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	h := New(ctx, nil, interval)
	t.Cleanup(func() { cancel(); h.Wait() })
	return h
}

// counter is a fake Source whose payload is a number the test controls.
type counter struct {
	calls    atomic.Int64
	value    atomic.Int64
	inflight atomic.Int32
	overlap  atomic.Bool // set if two polls ever ran at once
	// delay makes each poll slow and deaf to cancellation, widening the
	// window in which a stopped poller is still inside Poll.
	delay time.Duration
}

func (c *counter) Poll(ctx context.Context) ([]byte, error) {
	if c.inflight.Add(1) > 1 {
		c.overlap.Store(true)
	}
	defer c.inflight.Add(-1)
	c.calls.Add(1)
	time.Sleep(c.delay) // a slow poll, deaf to cancellation on purpose
	return []byte(strconv.FormatInt(c.value.Load(), 10)), nil
}

func (c *counter) source() func() Source { return func() Source { return c } }

// reader drains an outbox like a websocket writer would and remembers what
// it saw.
type reader struct {
	box *Outbox

	mu   sync.Mutex
	got  []Message
	last map[string]string
}

func startReader(t *testing.T) *reader {
	t.Helper()
	r := &reader{box: NewOutbox(), last: map[string]string{}}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-r.box.Ready():
			}
			msgs := r.box.Take()
			r.mu.Lock()
			for _, m := range msgs {
				r.got = append(r.got, m)
				r.last[m.Topic] = string(m.Payload)
			}
			r.mu.Unlock()
		}
	}()
	t.Cleanup(func() { close(stop); <-done })
	return r
}

func (r *reader) latest(topic string) (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	v, ok := r.last[topic]
	return v, ok
}

func (r *reader) payloads(topic string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, m := range r.got {
		if m.Topic == topic {
			out = append(out, string(m.Payload))
		}
	}
	return out
}
