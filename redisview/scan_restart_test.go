package redisview_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
)

// walker walks a cluster connection with ScanStep, COUNT 100 per node,
// remembering every key it was given.
type walker struct {
	t    *testing.T
	c    *redisview.Conn
	cur  redisview.Cursor
	seen map[string]bool
	// restarts counts the steps that said a shard is walked again.
	restarts int
}

func newWalker(t *testing.T, c *redisview.Conn) *walker {
	return &walker{t: t, c: c, cur: redisview.CursorStart, seen: map[string]bool{}}
}

func (w *walker) step() error {
	keys, next, restarted, err := redisview.ScanStepRestarts(context.Background(), w.c.Client(), w.cur, "", 100, "")
	if restarted {
		w.restarts++
	}
	for _, k := range keys {
		w.seen[k] = true
	}
	if err == nil {
		w.cur = next
	}
	return err
}

// half walks ten steps: about half of each shard's 2000 keys.
func (w *walker) half() {
	w.t.Helper()
	for range 10 {
		if err := w.step(); err != nil {
			w.t.Fatal(err)
		}
	}
	if w.cur.Done() || len(w.seen) > 4500 {
		w.t.Fatalf("the walk is not half-way: %d keys seen", len(w.seen))
	}
	if w.restarts != 0 {
		w.t.Fatalf("a walk with no failover says a shard restarted (%d steps)", w.restarts)
	}
}

// finish walks to the end (a failing step is tried again: a node may be
// failing over) and fails t if any of the n keys k:<i> was not given.
func (w *walker) finish(n int, what string) {
	w.t.Helper()
	steps := 0
	// A failing step waits a moment: the client learns the new primary.
	redistest.Eventually(w.t, 60*time.Second, "the walk ends", func() bool {
		for ; !w.cur.Done(); steps++ {
			if steps > 5000 {
				w.t.Fatalf("the walk does not end (%d steps, at %q)", steps, w.cur)
			}
			if err := w.step(); err != nil {
				return false
			}
		}
		return true
	})
	var missed []string
	for i := range n {
		if k := fmt.Sprintf("k:%d", i); !w.seen[k] {
			missed = append(missed, k)
		}
	}
	if len(missed) > 0 {
		w.t.Fatalf("the walk across %s missed %d of %d keys, e.g. %q", what, len(missed), n, missed[:min(5, len(missed))])
	}
}

func clusterConn(t *testing.T, cl *redistest.Cluster) *redisview.Conn {
	t.Helper()
	c := openURL(t, cl.URL())
	if err := c.Detect(context.Background()); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestScanStepRestartsARestartedPrimary: a primary restarted between two
// steps (its data loaded from its RDB file) keeps its node ID but is
// another process, whose SCAN cursors mean nothing of the old one's: the
// walk must start that shard again, and every key is given.
func TestScanStepRestartsARestartedPrimary(t *testing.T) {
	cl := redistest.StartCluster(t)
	loadCluster(t, cl, 6000)
	ctx := context.Background()
	c := clusterConn(t, cl)
	w := newWalker(t, c)
	w.half()

	p := cl.Primaries()[1]
	// Its replica must not take over while it restarts.
	if err := cl.ReplicaOf(p).Client(0).ConfigSet(ctx, "cluster-replica-no-failover", "yes").Err(); err != nil {
		t.Fatal(err)
	}
	id, run := p.NodeID(), p.RunID()
	if err := p.Client(0).Save(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	p.Restart()
	cl.WaitOK(30 * time.Second)
	if p.NodeID() != id || p.RunID() == run {
		t.Fatalf("the restart: node ID %s→%s, run_id %s→%s; want the same node, another process", id, p.NodeID(), run, p.RunID())
	}
	if n, err := p.Client(0).DBSize(ctx).Result(); err != nil || n < 1500 {
		t.Fatalf("the restarted primary holds %d keys (%v): its RDB was not loaded", n, err)
	}
	w.finish(6000, "a primary's restart")
	if w.restarts == 0 {
		t.Error("no step said a shard was walked again after a primary's restart: a sum of the walk counts its keys twice")
	}
}

// TestScanStepFollowsATakeover: a replica promoted by CLUSTER FAILOVER
// TAKEOVER between two steps (the old primary stays up, a replica now)
// serves that shard from then on; every key is given.
func TestScanStepFollowsATakeover(t *testing.T) {
	cl := redistest.StartCluster(t)
	loadCluster(t, cl, 6000)
	c := clusterConn(t, cl)
	w := newWalker(t, c)
	w.half()
	cl.WaitReplicated(30 * time.Second) // the takeover loses no key
	p := cl.Primaries()[2]
	cl.Takeover(cl.ReplicaOf(p), 30*time.Second)
	w.finish(6000, "a takeover")
	if w.restarts == 0 {
		t.Error("no step said a shard was walked again after a takeover: a sum of the walk counts its keys twice")
	}
}

// TestScanStepWalksANodeThatTookAnotherShard: when one node comes to serve
// the slots of two positions (every slot of one primary moved to another
// between two steps), neither is dropped: that node is walked again from
// its start, the moved keys with it.
func TestScanStepWalksANodeThatTookAnotherShard(t *testing.T) {
	cl := redistest.StartCluster(t)
	loadCluster(t, cl, 6000)
	c := clusterConn(t, cl)
	w := newWalker(t, c)
	w.half()
	ps := cl.Primaries()
	from, to := ps[1], ps[0]
	ranges, err := from.Client(0).ClusterSlots(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	slots, id := 0, from.NodeID()
	for _, r := range ranges {
		if len(r.Nodes) > 0 && r.Nodes[0].ID == id {
			slots += int(r.End - r.Start + 1)
		}
	}
	cl.Reshard(from, to, slots)
	w.finish(6000, "a reshard")
	if w.restarts == 0 {
		t.Error("no step said a shard was walked again after a reshard: a sum of the walk counts its keys twice")
	}
}
