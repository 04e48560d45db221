package redisview_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
)

func openURL(t *testing.T, url string) *redisview.Conn {
	t.Helper()
	c, err := redisview.Open(redisview.ConnConfig{Name: "t", URL: url}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestClusterConnectionIsDetected: a redis:// URL of any one cluster node
// gets a cluster client that reads and writes keys of every primary, and
// offers database 0 only.
func TestClusterConnectionIsDetected(t *testing.T) {
	cl := redistest.StartCluster(t)
	ctx := context.Background()
	c := openURL(t, "redis://"+cl.Nodes[4].Addr)
	if err := c.Detect(ctx); err != nil {
		t.Fatal(err)
	}
	if top := c.Topology(); top.Kind != redisview.Cluster || top.Databases != 1 {
		t.Fatalf("topology %+v, want a cluster of 1 database", top)
	}
	for i, p := range cl.Primaries() {
		k := cl.KeyOn(p, "key:")
		if err := c.Client().Set(ctx, k, strconv.Itoa(i), 0).Err(); err != nil {
			t.Fatalf("SET %s (on %s): %v", k, p.Addr, err)
		}
		if v, err := p.Client(0).Get(ctx, k).Result(); err != nil || v != strconv.Itoa(i) {
			t.Fatalf("%s on its node %s = %q, %v", k, p.Addr, v, err)
		}
		if v, err := c.DB(0).Get(ctx, k).Result(); err != nil || v != strconv.Itoa(i) {
			t.Fatalf("GET %s = %q, %v", k, v, err)
		}
	}
	if err := c.CheckDB(ctx, 0); err != nil {
		t.Fatalf("CheckDB(0): %v", err)
	}
	if err := c.CheckDB(ctx, 1); !errors.Is(err, redisview.ErrNoDatabase) {
		t.Fatalf("CheckDB(1) = %v, want ErrNoDatabase", err)
	}
}

// TestStandaloneStaysStandalone: a server without cluster mode keeps its
// databases.
func TestStandaloneStaysStandalone(t *testing.T) {
	ctx := context.Background()
	s := redistest.Start(t)
	c := openURL(t, s.URL(2))
	if err := c.Detect(ctx); err != nil {
		t.Fatal(err)
	}
	if top := c.Topology(); top.Kind != redisview.Standalone || top.Databases != 0 {
		t.Fatalf("standalone server: topology %+v", top)
	}
	if err := c.CheckDB(ctx, 5); err != nil {
		t.Fatalf("CheckDB(5): %v", err)
	}
}

// TestSentinelConnectionFollowsFailover: a redis+sentinel:// connection
// reads and writes the primary, and after the sentinel promotes the
// replica it does again without being reopened.
func TestSentinelConnectionFollowsFailover(t *testing.T) {
	s := redistest.StartSentinel(t)
	ctx := context.Background()
	c := openURL(t, s.URL(2))
	if top := c.Topology(); top.Kind != redisview.Sentinel || top.Master != redistest.MasterName {
		t.Fatalf("topology %+v", top)
	}
	if err := c.Client().Set(ctx, "k", "before", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if v, err := s.Primary.Client(2).Get(ctx, "k").Result(); err != nil || v != "before" {
		t.Fatalf("the primary's db 2 holds %q, %v", v, err)
	}
	replica := s.Replica.Client(2) // one client, not one per poll
	redistest.Eventually(t, 10*time.Second, "the replica has the key", func() bool {
		v, _ := replica.Get(ctx, "k").Result()
		return v == "before"
	})
	s.KillPrimary(30 * time.Second)
	redistest.Eventually(t, 20*time.Second, "the connection reads and writes the promoted replica", func() bool {
		v, err := c.Client().Get(ctx, "k").Result()
		return err == nil && v == "before" && c.Client().Set(ctx, "k", "after", 0).Err() == nil
	})
	if v, err := replica.Get(ctx, "k").Result(); err != nil || v != "after" {
		t.Fatalf("the new primary's db 2 holds %q, %v", v, err)
	}
}

// TestClusterURLWithADatabaseIsRefused: a cluster has database 0 only; a
// URL naming another is refused at detection with a clear reason in the
// connection's status, and no client reads database 0 as if it were it.
func TestClusterURLWithADatabaseIsRefused(t *testing.T) {
	cl := redistest.StartCluster(t)
	ctx := context.Background()
	c := openURL(t, "redis://"+cl.Nodes[0].Addr+"/3")
	if err := c.Detect(ctx); err == nil || !strings.Contains(err.Error(), "database 0 only") {
		t.Fatalf("Detect: %v, want a refusal naming database 0", err)
	}
	if c.IsCluster() {
		t.Fatal("the connection moved onto a cluster client anyway")
	}
	mctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); c.Monitor(mctx, 100*time.Millisecond) }()
	t.Cleanup(func() { cancel(); <-done })
	redistest.Eventually(t, 5*time.Second, "the status says why", func() bool {
		st := c.Status()
		return !st.Checked.IsZero() && !st.Up && strings.Contains(st.Err, "database 0 only") && strings.Contains(st.Err, "/3")
	})
}
