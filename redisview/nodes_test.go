package redisview

import (
	"context"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/redistest"
)

// TestReadClusterCountsAsOwnTraffic: every command of a cluster read
// (CLUSTER NODES, each node's INFO, each primary's CLUSTER INFO) counts
// as Keydeck's own, replicas' included, and every node is listed.
func TestReadClusterCountsAsOwnTraffic(t *testing.T) {
	cl := redistest.StartCluster(t)
	ctx := context.Background()
	c := openConn(t, cl.URL())
	if err := c.Detect(ctx); err != nil || !c.IsCluster() {
		t.Fatalf("detect: %v", err)
	}
	if _, err := ReadCluster(ctx, c, time.Second); err != nil { // connections set up
		t.Fatal(err)
	}
	before := c.OwnCount()
	rep, err := ReadCluster(ctx, c, time.Second)
	after := c.OwnCount()
	if err != nil || len(rep.Nodes) != 6 || rep.State != "ok" || rep.SlotsAssigned != ClusterSlots {
		t.Fatalf("read: %v, %d nodes, state %q, %d slots", err, len(rep.Nodes), rep.State, rep.SlotsAssigned)
	}
	for _, n := range rep.Nodes {
		if n.Info == "" || n.Err != "" {
			t.Errorf("%s not read: %s", n.Addr, n.Err)
		}
	}
	// CLUSTER NODES, 6 INFO, 3 CLUSTER INFO; the cluster client sends
	// CLUSTER NODES to a random node, whose first connection's set-up
	// (HELLO, CLIENT SETNAME) counts too.
	if got := after.Done - before.Done; got < 10 || got > 12 {
		t.Errorf("own commands counted %d, want 10 (CLUSTER NODES, 6 INFO, 3 CLUSTER INFO) or 12 (and a new connection's set-up)", got)
	}
}
