package server_test

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/clock"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/server"
)

func TestWatchReceivesAndCaps(t *testing.T) {
	s := redistest.Start(t)
	ctx := ctxT(t)
	conn := eislandConn(t, s)
	pub := s.Client(0)
	defer pub.Close()
	// A stopped clock: every message falls in the same second, so the
	// rate cap is what keeps or drops it.
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	var kicks atomic.Int64
	w, err := server.StartWatch(ctx, redisview.ServerFor(conn.Client()), "jobs.*", server.WatchOptions{Pattern: true, Rate: 5, Keep: 3, PayloadMax: 8,
		Now: clk.Now, OnMessage: func() { kicks.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	binary := "\xff\xfe<b>" + strings.Repeat("z", 20)
	pub.Publish(ctx, "jobs.a", binary)
	for i := range 9 {
		pub.Publish(ctx, "jobs.b", i)
	}
	pub.Publish(ctx, "other", "not matched")
	eventually(t, "10 messages", func() bool { return w.State().Received == 10 })
	st := w.State()
	if st.Dropped != 5 || kicks.Load() != 5 || len(st.Messages) != 3 {
		t.Fatalf("state = %+v, kicks %d; want 5 kept (3 shown), 5 dropped", st, kicks.Load())
	}
	// Newest first: the 4 kept after the binary one are 0..3.
	if st.Messages[0].Payload != "3" || st.Messages[2].Payload != "1" || st.Messages[0].Pattern != "jobs.*" {
		t.Errorf("messages = %+v", st.Messages)
	}
	clk.Advance(time.Second)
	pub.Publish(ctx, "jobs.c", "next second")
	eventually(t, "the next second's message", func() bool { return w.State().Received == 11 })
	if st := w.State(); st.Dropped != 5 || st.Messages[0].Payload != "next sec" || st.Messages[0].More != 3 {
		t.Errorf("after a second: %+v", st.Messages[0])
	}
	if err := w.Close(); err != nil {
		t.Error(err)
	}
	n, _ := pub.PubSubNumPat(ctx).Result()
	if n != 0 {
		t.Errorf("NUMPAT after Close = %d, want 0", n)
	}
}

func TestWatchKeepsBinaryExactly(t *testing.T) {
	s := redistest.Start(t)
	ctx := ctxT(t)
	conn := eislandConn(t, s)
	pub := s.Client(0)
	defer pub.Close()
	w, err := server.StartWatch(ctx, redisview.ServerFor(conn.Client()), "bin", server.WatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	payload := "\xff\x00<script>\xc3"
	pub.Publish(ctx, "bin", payload)
	eventually(t, "the message", func() bool { return w.State().Received == 1 })
	if m := w.State().Messages[0]; m.Payload != payload || m.Channel != "bin" {
		t.Errorf("message = %q on %q", m.Payload, m.Channel)
	}
}

// A watch says when its subscription was lost and came back, and when it
// ended for good (its client closed): the page then restarts it.
func TestWatchReportsLossAndEnd(t *testing.T) {
	s := redistest.Start(t)
	ctx := ctxT(t)
	pub := s.Client(0)
	defer pub.Close()
	own := s.Client(0)
	w, err := server.StartWatch(ctx, redisview.ServerFor(own), "gap", server.WatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	// The server drops the subscriber: go-redis subscribes again by itself.
	if err := pub.Do(ctx, "client", "kill", "type", "pubsub").Err(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the gap noted", func() bool { w.Check(ctx); return w.State().Gaps == 1 })
	if st := w.State(); st.Ended || !st.DownSince.IsZero() || st.LastGap[1].IsZero() {
		t.Errorf("after a reconnect: %+v", st)
	}
	pub.Publish(ctx, "gap", "after")
	eventually(t, "a message after the gap", func() bool { return w.State().Received == 1 })
	own.Close()
	eventually(t, "the end noted", func() bool { return w.State().Ended })
	if st := w.State(); st.DownSince.IsZero() || st.LastErr == "" {
		t.Errorf("an ended watch says %+v", st)
	}
}
