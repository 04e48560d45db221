package redisview_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
)

// TestScanStepRestartsAShardAfterFailover: a SCAN cursor means something
// only to the process that gave it (its hash seed is its own), so a walk
// that outlives a failover must walk the promoted replica's shard again
// from 0: every key is seen at least once.
func TestScanStepRestartsAShardAfterFailover(t *testing.T) {
	cl := redistest.StartCluster(t)
	loadCluster(t, cl, 6000)
	ctx := context.Background()
	c := openURL(t, cl.URL())
	if err := c.Detect(ctx); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	cur := redisview.CursorStart
	step := func() error {
		keys, next, err := redisview.ScanStep(ctx, c.Client(), cur, "", 100, "")
		for _, k := range keys {
			seen[k] = true
		}
		if err == nil {
			cur = next
		}
		return err
	}
	for range 10 { // about half of each shard's 2000 keys
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	if cur.Done() || len(seen) > 4500 {
		t.Fatalf("the walk is not half-way: %d keys seen", len(seen))
	}
	// Every key is on a replica too: the failover loses none.
	cl.WaitReplicated(30 * time.Second)
	dead := cl.Primaries()[1]
	dead.Stop()
	cl.WaitFailover(dead, 30*time.Second)
	steps := 0
	// A failing step waits a moment: the client learns the new primary.
	redistest.Eventually(t, 30*time.Second, "the walk ends", func() bool {
		for ; !cur.Done(); steps++ {
			if steps > 2000 {
				t.Fatalf("the walk does not end (%d steps, at %q)", steps, cur)
			}
			if err := step(); err != nil {
				return false
			}
		}
		return true
	})
	var sum int64
	for _, p := range cl.Primaries() {
		n, err := p.Client(0).DBSize(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		sum += n
	}
	if sum != 6000 {
		t.Fatalf("the cluster holds %d keys after the failover, not the 6000 written: the promoted replica had not caught up", sum)
	}
	var missed []string
	for i := range 6000 {
		if k := fmt.Sprintf("k:%d", i); !seen[k] {
			missed = append(missed, k)
		}
	}
	if len(missed) > 0 {
		t.Fatalf("the walk across a failover missed %d of 6000 keys, e.g. %q", len(missed), missed[:min(5, len(missed))])
	}
}
