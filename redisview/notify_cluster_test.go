package redisview

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/redistest"
)

// A cluster's keyspace events are each node's own: the watcher hears a
// write on every primary, not only on the one a PSUBSCRIBE through the
// cluster client reaches.
func TestWatchKeyspaceHearsEveryPrimary(t *testing.T) {
	cl := redistest.StartCluster(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, n := range cl.Nodes {
		if err := n.Client(0).ConfigSet(ctx, "notify-keyspace-events", "KA").Err(); err != nil {
			t.Fatal(err)
		}
	}
	c := openConn(t, cl.URL())
	if err := c.Detect(ctx); err != nil || !c.IsCluster() {
		t.Fatalf("detect: %v (cluster %v)", err, c.IsCluster())
	}
	var mu sync.Mutex
	heard := map[string]bool{}
	go c.WatchKeyspace(ctx, func(_ int, key string) {
		mu.Lock()
		heard[key] = true
		mu.Unlock()
	})
	var keys []string
	for i, p := range cl.Primaries() {
		keys = append(keys, cl.KeyOn(p, "ks:"+string(rune('a'+i))+":"))
	}
	n := 0
	redistest.Eventually(t, 10*time.Second, "an event from every primary", func() bool {
		// Writes before the subscriptions are up are not seen: keep writing.
		n++
		for _, k := range keys {
			cl.Client().Set(ctx, k, n, 0)
		}
		mu.Lock()
		defer mu.Unlock()
		for _, k := range keys {
			if !heard[k] {
				return false
			}
		}
		return true
	})
}
