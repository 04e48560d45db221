package redistest

import (
	"context"
	"testing"
	"time"
)

// TestClusterStartsAndFailsOver: the harness's cluster serves every slot,
// and a killed primary's replica takes over.
func TestClusterStartsAndFailsOver(t *testing.T) {
	start := time.Now()
	c := StartCluster(t)
	t.Logf("cluster up in %v", time.Since(start))
	ctx := context.Background()
	cl := c.Client()
	prim := c.Primaries()
	if len(prim) != 3 {
		t.Fatalf("%d primaries, want 3", len(prim))
	}
	for _, p := range prim {
		k := c.KeyOn(p, "k")
		if err := cl.Set(ctx, k, "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
		n, err := p.Client(0).Exists(ctx, k).Result()
		if err != nil || n != 1 {
			t.Fatalf("key %s not on %s: %v", k, p.Addr, err)
		}
	}
	start = time.Now()
	prim[0].Stop()
	c.WaitFailover(prim[0], 30*time.Second)
	t.Logf("failover in %v", time.Since(start))
	if got := len(c.Primaries()); got != 3 {
		t.Fatalf("%d primaries after the failover, want 3", got)
	}
}

// TestSentinelFailsOver: the harness's sentinel promotes the replica when
// the primary is killed.
func TestSentinelFailsOver(t *testing.T) {
	start := time.Now()
	s := StartSentinel(t)
	t.Logf("sentinel up in %v", time.Since(start))
	if got := s.PrimaryAddr(); got != s.Primary.Addr {
		t.Fatalf("primary %s, want %s", got, s.Primary.Addr)
	}
	start = time.Now()
	s.KillPrimary(30 * time.Second)
	t.Logf("failover in %v", time.Since(start))
	if got := s.PrimaryAddr(); got != s.Replica.Addr {
		t.Fatalf("primary %s after failover, want %s", got, s.Replica.Addr)
	}
}
