package transfer_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/demo"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview/transfer"
)

// The seeds' data (the three systems the demo seeds, on real Redis)
// round-trips byte-exact: every database of eIsland, the gateway's and
// vertique's (Bucket4j binary states) exported, imported into empty
// servers, and read back the same, TTLs within a second.
func TestSeedsRoundTrip(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	src, dst := redistest.Start(t), redistest.Start(t)
	if err := demo.SeedEIsland(ctx, func(db int) redis.Cmdable { return src.Client(db) }, now); err != nil {
		t.Fatal(err)
	}
	if err := demo.SeedGateway(ctx, src.Client(15), now); err != nil {
		t.Fatal(err)
	}
	vq, vqDst := redistest.Start(t), redistest.Start(t)
	if err := demo.SeedVertique(ctx, vq.Client(0), now, demo.DemoSecret); err != nil {
		t.Fatal(err)
	}
	pairs := []struct{ a, b redis.UniversalClient }{{vq.Client(0), vqDst.Client(0)}}
	for db := range 16 {
		pairs = append(pairs, struct{ a, b redis.UniversalClient }{src.Client(db), dst.Client(db)})
	}
	total := 0
	for _, p := range pairs {
		exported := time.Now()
		file := exportAll(t, p.a, transfer.DefaultReadLimits, nil)
		total += len(importAll(t, p.b, file))
		sameDatabases(t, p.a, p.b, exported)
	}
	if total < 1000 {
		t.Fatalf("only %d keys exported: the seeds did not run?", total)
	}
	t.Logf("%d keys round-tripped", total)
}
