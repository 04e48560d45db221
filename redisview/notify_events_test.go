package redisview

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/redistest"
)

// eventLog records what an OnKeyEvent consumer hears.
type eventLog struct {
	mu     sync.Mutex
	events []string // "db key event"
	states []bool
}

func (l *eventLog) ev(db int, key, event string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, string(rune('0'+db))+" "+key+" "+event)
}

func (l *eventLog) state(on bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.states = append(l.states, on)
}

func (l *eventLog) got() ([]string, []bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.events), slices.Clone(l.states)
}

func numPat(t *testing.T, s *redistest.Server) int64 {
	t.Helper()
	n, err := s.Client(0).PubSubNumPat(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Every consumer of a connection's keyspace events — WatchKeyspace's and
// OnKeyEvent's — shares one PSUBSCRIBE; OnKeyEvent hears the event's name
// and the key byte for byte; the subscription is closed when the last
// consumer leaves, and a consumer that comes back later hears each event
// once.
func TestOnKeyEventSharesOneSubscription(t *testing.T) {
	s := redistest.Start(t, "--notify-keyspace-events", "KEA")
	c := openConn(t, s.URL(0))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	watched := make(chan string, 64)
	wctx, wcancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		c.WatchKeyspace(wctx, func(db int, key string) {
			select {
			case watched <- key:
			default:
			}
		})
	})
	var a, b eventLog
	removeA := c.OnKeyEvent(a.ev, a.state)
	redistest.Eventually(t, 5*time.Second, "subscribed", func() bool { return c.Keyspace().Subscribed })
	if _, st := a.got(); !slices.Equal(st, []bool{true}) {
		t.Fatalf("states before the first event: %v", st)
	}
	// A consumer that comes while the subscription is up is told at once.
	removeB := c.OnKeyEvent(b.ev, b.state)
	if _, st := b.got(); !slices.Equal(st, []bool{true}) {
		t.Fatalf("a consumer joining a subscription that is up: states %v", st)
	}
	if n := numPat(t, s); n != 1 {
		t.Fatalf("%d pattern subscriptions for three consumers", n)
	}
	key := "a__:b \x00\xff:é "
	db3 := s.Client(3)
	if err := db3.Set(ctx, key, "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := db3.Del(ctx, key).Err(); err != nil {
		t.Fatal(err)
	}
	want := []string{"3 " + key + " set", "3 " + key + " del"}
	for _, l := range []*eventLog{&a, &b} {
		redistest.Eventually(t, 5*time.Second, "both events", func() bool { ev, _ := l.got(); return len(ev) >= 2 })
		if ev, _ := l.got(); !slices.Equal(ev, want) {
			t.Fatalf("events %q, want %q", ev, want)
		}
	}
	if k := <-watched; k != key {
		t.Fatalf("WatchKeyspace heard %q", k)
	}

	removeA()
	removeB()
	if ev, _ := a.got(); len(ev) != 2 {
		t.Fatalf("a removed consumer: %q", ev)
	}
	wcancel()
	wg.Wait()
	// The last consumer gone, the subscription is closed when it returns.
	if c.Keyspace().Subscribed {
		t.Fatal("still subscribed with no consumer")
	}
	redistest.Eventually(t, 5*time.Second, "no pattern subscription left", func() bool { return numPat(t, s) == 0 })
	if _, st := b.got(); !slices.Equal(st, []bool{true}) {
		t.Fatalf("a removed consumer was told %v", st)
	}

	// Back again: one subscription, every event once.
	var d eventLog
	removeD := c.OnKeyEvent(d.ev, d.state)
	defer removeD()
	redistest.Eventually(t, 5*time.Second, "subscribed again", func() bool { _, st := d.got(); return len(st) == 1 })
	for i := range 3 {
		if err := db3.Set(ctx, "k", i, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := db3.Do(ctx, "PING").Err(); err != nil {
		t.Fatal(err)
	}
	redistest.Eventually(t, 5*time.Second, "three events", func() bool { ev, _ := d.got(); return len(ev) >= 3 })
	time.Sleep(100 * time.Millisecond) // a duplicate would arrive with them
	if ev, _ := d.got(); !slices.Equal(ev, []string{"3 k set", "3 k set", "3 k set"}) {
		t.Fatalf("events %q", ev)
	}
	if n := numPat(t, s); n != 1 {
		t.Fatalf("%d pattern subscriptions", n)
	}
}

// A subscription that breaks tells its consumers (state false: events
// are lost until the next state true).
func TestOnKeyEventToldOfALostSubscription(t *testing.T) {
	s := redistest.Start(t, "--notify-keyspace-events", "KEA")
	c := openConn(t, s.URL(0))
	ctx := context.Background()
	var l eventLog
	defer c.OnKeyEvent(l.ev, l.state)()
	redistest.Eventually(t, 5*time.Second, "subscribed", func() bool { _, st := l.got(); return len(st) == 1 })
	if err := s.Client(0).ClientKillByFilter(ctx, "TYPE", "pubsub").Err(); err != nil {
		t.Fatal(err)
	}
	redistest.Eventually(t, 10*time.Second, "told it ended, then subscribed again", func() bool {
		_, st := l.got()
		return slices.Equal(st, []bool{true, false, true})
	})
}

// A consumer that falls behind a flood has Redis drop the subscriber
// (client-output-buffer-limit pubsub): its consumers are told the events
// were lost, and the subscription comes back.
func TestOnKeyEventToldOfAnOverflow(t *testing.T) {
	s := redistest.Start(t, "--notify-keyspace-events", "KEA", "--client-output-buffer-limit", "pubsub 256kb 0 0")
	c := openConn(t, s.URL(0))
	ctx := context.Background()
	var l eventLog
	hold := make(chan struct{})
	var once sync.Once
	defer c.OnKeyEvent(func(db int, key, event string) {
		once.Do(func() { <-hold }) // stuck on the first event
	}, l.state)()
	defer c.OnKeyEvent(l.ev, nil)()
	var released sync.Once
	release := func() { released.Do(func() { close(hold) }) }
	defer release() // before the consumers are removed (a stuck one holds dispatch)
	redistest.Eventually(t, 5*time.Second, "subscribed", func() bool { _, st := l.got(); return len(st) == 1 })
	long := strings.Repeat("k", 1000)
	p := s.Client(0).Pipeline()
	for i := range 20000 { // 20 MB of events: over the socket buffers and 256 kB queued
		p.Set(ctx, fmt.Sprintf("%s:%d", long, i), 1, 0)
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	redistest.Eventually(t, 10*time.Second, "the subscriber dropped by Redis", func() bool { return numPat(t, s) == 0 })
	release()
	redistest.Eventually(t, 10*time.Second, "told it was lost, then subscribed again", func() bool {
		_, st := l.got()
		return slices.Equal(st, []bool{true, false, true})
	})
	if ev, _ := l.got(); len(ev) >= 20000 {
		t.Fatalf("all %d events heard", len(ev))
	}
}
