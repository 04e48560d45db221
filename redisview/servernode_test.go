package redisview

import (
	"context"
	"errors"
	"testing"

	"github.com/keydeck/keydeck/internal/redistest"
)

// TestServerOfAStandaloneConnection: one server, named by "", and any
// address refused without being dialled.
func TestServerOfAStandaloneConnection(t *testing.T) {
	s := redistest.Start(t)
	c := openConn(t, s.URL(0))
	ctx := context.Background()
	nodes, err := c.ServerNodes(ctx)
	if err != nil || len(nodes) != 1 || nodes[0].Addr != "" || nodes[0].Label() != "this server" {
		t.Fatalf("nodes: %+v, %v", nodes, err)
	}
	srv, err := c.Server(ctx, "")
	n := srv.Node
	if err != nil || !n.Primary || srv.Client().Ping(ctx).Err() != nil {
		t.Fatalf("server: %+v, %v", n, err)
	}
	if _, err := c.Server(ctx, s.Addr); !errors.Is(err, ErrUnknownNode) {
		t.Errorf("an address on a standalone connection: %v, want ErrUnknownNode", err)
	}
}

// TestServerOfAClusterNode: every node CLUSTER NODES lists is reachable by
// its address, each answering as itself; an address the cluster does not
// list is refused.
func TestServerOfAClusterNode(t *testing.T) {
	cl := redistest.StartCluster(t)
	c := openConn(t, cl.URL())
	ctx := context.Background()
	if err := c.Detect(ctx); err != nil || !c.IsCluster() {
		t.Fatalf("detect: %v", err)
	}
	nodes, err := c.ServerNodes(ctx)
	if err != nil || len(nodes) != 6 {
		t.Fatalf("nodes: %+v, %v", nodes, err)
	}
	primaries := 0
	for _, n := range nodes {
		srv, err := c.Server(ctx, n.Addr)
		got := srv.Node
		if err != nil || got.ID != n.ID {
			t.Fatalf("server %s: %+v, %v", n.Addr, got, err)
		}
		id, err := srv.Client().Do(ctx, "CLUSTER", "MYID").Text()
		if err != nil || id != n.ID {
			t.Errorf("%s answers as %q (%v), want %q", n.Addr, id, err, n.ID)
		}
		if n.Primary {
			primaries++
		}
	}
	if primaries != 3 {
		t.Errorf("%d primaries, want 3", primaries)
	}
	if srv, err := c.Server(ctx, ""); err != nil || !srv.Node.Primary {
		t.Errorf("default server: %+v, %v", srv.Node, err)
	}
	if _, err := c.Server(ctx, "127.0.0.1:1"); !errors.Is(err, ErrUnknownNode) {
		t.Errorf("a foreign address: %v, want ErrUnknownNode", err)
	}
}
