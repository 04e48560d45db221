package redisview

import (
	"context"
	"fmt"
	"testing"

	"github.com/keydeck/keydeck/internal/redistest"
)

// TestClusterScansCountAsOwnTraffic: on a cluster, a walk's SCANs go to
// each primary's node client, not through the cluster client, and must
// still count as Keydeck's own traffic; a command through the cluster
// client counts once, not once per layer.
func TestClusterScansCountAsOwnTraffic(t *testing.T) {
	cl := redistest.StartCluster(t)
	ctx := context.Background()
	cc := cl.Client()
	for i := range 600 {
		if err := cc.Set(ctx, fmt.Sprintf("k:%d", i), "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	c := openConn(t, cl.URL())
	if err := c.Detect(ctx); err != nil {
		t.Fatal(err)
	}
	calls := func() map[string]int64 {
		sum := map[string]int64{}
		for _, s := range cl.Nodes {
			m, err := s.CommandCalls(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range m {
				sum[k] += v
			}
		}
		return sum
	}
	before, own0 := calls(), c.OwnCount()
	cur := CursorStart
	for {
		_, next, err := ScanStep(ctx, c.Client(), cur, "", 20, "")
		if err != nil {
			t.Fatal(err)
		}
		if cur = next; cur.Done() {
			break
		}
	}
	for i := range 50 {
		if err := c.Client().Get(ctx, fmt.Sprintf("k:%d", i)).Err(); err != nil {
			t.Fatal(err)
		}
	}
	own1, after := c.OwnCount(), calls()
	delta := func(k string) int64 { return after[k] - before[k] }
	var ran int64 // every command the nodes ran but the test's INFOs and the replicas' REPLCONF
	for k := range after {
		if k != "info" && k != "replconf" {
			ran += delta(k)
		}
	}
	own := own1.Done - own0.Done
	if scans, gets := delta("scan"), delta("get"); scans < 30 || gets != 50 || own < scans+gets || own > ran {
		t.Fatalf("Keydeck counted %d own commands; the nodes ran %d SCAN and %d GET, %d commands in all", own, scans, gets, ran)
	}
}
