package redisview_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
)

// A cluster URL with more seeds (?addr=) is detected when its first node
// is down: the seeds exist so that Keydeck starts without it.
func TestClusterDetectedThroughALaterSeed(t *testing.T) {
	cl := redistest.StartCluster(t)
	dead := redistest.FreePort(t)
	c := openURL(t, fmt.Sprintf("redis://127.0.0.1:%d?addr=%s&addr=%s", dead, cl.Nodes[1].Addr, cl.Nodes[2].Addr))
	ctx := context.Background()
	if err := c.Detect(ctx); err != nil {
		t.Fatalf("Detect with the first seed down: %v", err)
	}
	if top := c.Topology(); top.Kind != redisview.Cluster {
		t.Fatalf("topology %+v, want a cluster", top)
	}
	for _, p := range cl.Primaries() {
		k := cl.KeyOn(p, "seed:")
		if err := c.Client().Set(ctx, k, "v", 0).Err(); err != nil {
			t.Fatalf("SET %s (on %s): %v", k, p.Addr, err)
		}
	}
}
