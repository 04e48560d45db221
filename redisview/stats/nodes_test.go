package stats

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/redistest"
)

// primariesDBSize is DBSIZE summed over the cluster's primaries now.
func primariesDBSize(t *testing.T, cl *redistest.Cluster) int64 {
	t.Helper()
	var sum int64
	for _, s := range cl.Primaries() {
		n, err := s.Client(0).DBSize(context.Background()).Result()
		if err != nil {
			t.Fatalf("DBSIZE on %s: %v", s.Addr, err)
		}
		sum += n
	}
	return sum
}

func totalOf(ov Overview) int64 {
	var n int64
	for _, db := range ov.DBs {
		n += db.Keys
	}
	return n
}

// TestClusterOverviewCountsEveryPrimary: the overview of a cluster
// connection counts the keys of every primary (it read one random node's
// INFO, a third of them).
func TestClusterOverviewCountsEveryPrimary(t *testing.T) {
	cl := redistest.StartCluster(t)
	ctx := context.Background()
	cl.Fill("k:", 900)
	c := openConn(t, cl.URL())
	if err := c.Detect(ctx); err != nil || !c.IsCluster() {
		t.Fatalf("detect: %v", err)
	}
	want := primariesDBSize(t, cl)
	r := NewOverviewReader(c)
	for range 3 { // a random node each time, before
		ov := r.Read(ctx)
		if ov.Err != "" {
			t.Fatal(ov.Err)
		}
		if got := totalOf(ov); got != want {
			t.Fatalf("the overview counts %d keys; DBSIZE over the primaries sums to %d", got, want)
		}
	}
}

// TestClusterOverviewNodesThroughFailover: every node is listed with its
// role (a replica with its primary), the slots are all covered; when a
// primary is killed the overview names it, then the promoted replica as
// primary, and counts every key again, on the same reader.
func TestClusterOverviewNodesThroughFailover(t *testing.T) {
	cl := redistest.StartCluster(t)
	ctx := context.Background()
	cl.Fill("k:", 900)
	c := openConn(t, cl.URL())
	if err := c.Detect(ctx); err != nil || !c.IsCluster() {
		t.Fatalf("detect: %v", err)
	}
	r := NewOverviewReader(c)
	ov := r.Read(ctx)
	if ov.Err != "" || ov.Cluster == nil {
		t.Fatalf("read: %q, cluster %v", ov.Err, ov.Cluster)
	}
	cs := ov.Cluster
	primaries := map[string]bool{}
	for _, s := range cl.Primaries() {
		primaries[s.Addr] = true
	}
	if len(cs.Nodes) != 6 {
		t.Fatalf("%d nodes listed, want 6: %+v", len(cs.Nodes), cs.Nodes)
	}
	slots := 0
	for _, n := range cs.Nodes {
		if n.Primary != primaries[n.Addr] {
			t.Errorf("%s listed primary=%v", n.Addr, n.Primary)
		}
		if !n.Primary && !primaries[n.PrimaryAddr] {
			t.Errorf("replica %s of %q, not of a primary", n.Addr, n.PrimaryAddr)
		}
		if n.Failing() || !n.Keys.OK || !n.UsedMemory.OK || !n.Policy.OK || n.Policy.V != "noeviction" {
			t.Errorf("node %s: %+v", n.Addr, n)
		}
		if !n.Primary && (!n.LagBytes.OK || n.LinkDown) {
			t.Errorf("replica %s: lag %+v, link down %v", n.Addr, n.LagBytes, n.LinkDown)
		}
		slots += n.Slots
	}
	if slots != 16384 || cs.Uncovered != 0 || cs.State.V != "ok" || cs.Uneven != "" || len(cs.Failing) != 0 || cs.Covered() != "" {
		t.Fatalf("cluster: slots %d, %+v", slots, cs)
	}
	if len(ov.Headroom) != 3 {
		t.Fatalf("headroom of %d primaries", len(ov.Headroom))
	}
	if ov2 := r.Read(ctx); !ov2.Cluster.Nodes[0].OpsPerSec.OK || !ov2.Server.OpsPerSec.OK {
		t.Errorf("rates on a second read: node %+v, server %+v", ov2.Cluster.Nodes[0].OpsPerSec, ov2.Server.OpsPerSec)
	}

	dead := cl.Primaries()[0]
	var replica string
	for _, n := range cs.Nodes {
		if !n.Primary && n.PrimaryAddr == dead.Addr {
			replica = n.Addr
		}
	}
	dead.Stop()
	redistest.Eventually(t, 30*time.Second, "the overview names the killed primary", func() bool {
		ov = r.Read(ctx)
		return ov.Err == "" && strings.Contains(strings.Join(ov.Cluster.Failing, "\n"), dead.Addr)
	})
	t.Logf("during the failover: %q; keyspace %s", ov.Cluster.Failing, ov.KeyspaceSource)
	cl.WaitFailover(dead, 30*time.Second)
	redistest.Eventually(t, 30*time.Second, "the overview names the promoted replica as primary and counts every key", func() bool {
		ov = r.Read(ctx)
		if ov.Err != "" {
			return false
		}
		for _, n := range ov.Cluster.Nodes {
			if n.Addr == replica && n.Primary && n.Slots > 0 && !n.Failing() {
				return totalOf(ov) == primariesDBSize(t, cl) && ov.Cluster.Covered() == ""
			}
		}
		return false
	})
	found := false
	for _, n := range ov.Cluster.Nodes {
		if n.Addr == dead.Addr {
			found = n.Failing() && n.Fail
		}
	}
	if !found {
		t.Errorf("the dead primary is not listed as failed: %+v", ov.Cluster.Nodes)
	}
	if fmt.Sprint(ov.Cluster.Failing) == "[]" {
		t.Errorf("no failing node named")
	}
}

// TestClusterOverviewWithoutClusterNodes: a user refused CLUSTER NODES
// (ACL) still gets the overview: the figures sum every primary's INFO and
// the nodes panel says why it is empty (the whole read failed).
func TestClusterOverviewWithoutClusterNodes(t *testing.T) {
	cl := redistest.StartCluster(t)
	ctx := context.Background()
	cl.Fill("k:", 600)
	for _, s := range cl.Nodes {
		if err := s.Client(0).Do(ctx, "ACL", "SETUSER", "viewer", "on", ">pw", "~*", "+@all", "-cluster|nodes").Err(); err != nil {
			t.Fatal(err)
		}
	}
	c := openConn(t, "redis://viewer:pw@"+cl.Nodes[0].Addr)
	if err := c.Detect(ctx); err != nil || !c.IsCluster() {
		t.Fatalf("detect: %v", err)
	}
	ov := NewOverviewReader(c).Read(ctx)
	if ov.Err != "" || ov.Cluster == nil || !strings.Contains(ov.Cluster.Err, "CLUSTER NODES") {
		t.Fatalf("read: %q, cluster %+v", ov.Err, ov.Cluster)
	}
	if got, want := totalOf(ov), primariesDBSize(t, cl); got != want || len(ov.Headroom) != 3 {
		t.Fatalf("keys %d, want %d; headroom %+v", got, want, ov.Headroom)
	}
}
