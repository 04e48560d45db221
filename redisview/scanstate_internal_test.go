package redisview

import (
	"context"
	"testing"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// TestClusterStateLivesWithItsConnection: what walks keep of a cluster
// (its slot map, its nodes' processes) is the connection's, dropped when
// it closes: connections opened and closed again leave nothing behind.
func TestClusterStateLivesWithItsConnection(t *testing.T) {
	cl := redistest.StartCluster(t)
	ctx := context.Background()
	for range 3 {
		c := openConn(t, cl.URL())
		if err := c.Detect(ctx); err != nil {
			t.Fatal(err)
		}
		cc := c.Client().(*redis.ClusterClient)
		if _, _, err := ScanStep(ctx, cc, CursorStart, "", 10, ""); err != nil {
			t.Fatal(err)
		}
		if _, ok := clusterStates.Load(cc); !ok {
			t.Fatal("a cluster connection keeps no walk state")
		}
		c.Close()
		if _, ok := clusterStates.Load(cc); ok {
			t.Fatal("a closed connection's walk state is still kept")
		}
	}
}
