package redisview

import (
	"context"
	"testing"

	"github.com/keydeck/keydeck/internal/redistest"
)

// TestPackSampleCoversEveryPrimary: pack detection on a cluster samples
// keys of every primary, not only of the node the URL names.
func TestPackSampleCoversEveryPrimary(t *testing.T) {
	cl := redistest.StartCluster(t)
	ctx := context.Background()
	cc := cl.Client()
	want := map[string]bool{}
	for _, p := range cl.Primaries() {
		k := cl.KeyOn(p, "sample:")
		if err := cc.Set(ctx, k, "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
		want[k] = true
	}
	c := openConn(t, cl.URL())
	if err := c.Detect(ctx); err != nil {
		t.Fatal(err)
	}
	sample, scanErr, err := c.sample(ctx)
	if err != nil || scanErr != nil {
		t.Fatal(err, scanErr)
	}
	for _, k := range sample {
		if k.DB != 0 {
			t.Errorf("sampled %q in db %d on a cluster", k.Name, k.DB)
		}
		delete(want, k.Name)
	}
	if len(want) > 0 {
		t.Fatalf("the sample (%d keys) misses %v", len(sample), want)
	}
}
