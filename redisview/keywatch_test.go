package redisview

import (
	"context"
	"testing"
)

// A topic's new poller registers before its old one unregisters.
func TestKeyWatchCounts(t *testing.T) {
	var w KeyWatch
	w.Add("c", 1, "k", "t")
	w.Add("c", 1, "k", "t") // restarted poller
	w.Remove("c", 1, "k", "t")
	if got := w.Names("c", 1, "k"); len(got) != 1 || got[0] != "t" {
		t.Fatalf("after overlap: %v", got)
	}
	w.Remove("c", 1, "k", "t")
	if got := w.Names("c", 1, "k"); len(got) != 0 || len(w.m) != 0 {
		t.Fatalf("after both left: %v %v", got, w.m)
	}
}

// A connection with a key watched is live interest in its keyspace
// events, before or after Listen; the last Remove ends it.
func TestKeyWatchIsKeyspaceInterest(t *testing.T) {
	c := openConn(t, "redis://127.0.0.1:1/0")
	want := func() int { c.ks.mu.Lock(); defer c.ks.mu.Unlock(); return c.ks.want }
	var w KeyWatch
	w.Add("t", 1, "k", "a") // before Listen
	ctx, cancel := context.WithCancel(context.Background())
	w.Listen(ctx, c, func(string) {})
	defer func() { cancel(); w.Wait() }()
	if n := want(); n != 1 {
		t.Fatalf("interest after Listen = %d", n)
	}
	w.Add("t", 2, "k2", "b")
	w.Add("other", 1, "k", "a")
	if n := want(); n != 1 {
		t.Fatalf("interest with two keys = %d", n)
	}
	w.Remove("t", 1, "k", "a")
	if n := want(); n != 1 {
		t.Fatalf("interest with one key left = %d", n)
	}
	w.Remove("t", 2, "k2", "b")
	if n := want(); n != 0 {
		t.Fatalf("interest with no key = %d", n)
	}
}
