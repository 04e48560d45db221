package redisview

import "testing"

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
