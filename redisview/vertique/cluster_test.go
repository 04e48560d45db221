package vertique_test

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/demo"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/redisview/vertique"
)

// TestWalkCountsEveryPrimary: the bucket inventory of a cluster walks one
// cursor per primary: it counts every bucket, as many as were written
// over all three primaries.
func TestWalkCountsEveryPrimary(t *testing.T) {
	cl := redistest.StartCluster(t)
	ctx := context.Background()
	cc := cl.Client()
	state := demo.EncodeBucketState(demo.BucketState{Format: 1,
		Bandwidths: []demo.Bandwidth{{Capacity: 5, InitialTokens: 5, RefillPeriodNanos: int64(time.Minute), RefillTokens: 5, TimeOfFirstRefillMillis: demo.NotAligned}},
		States:     []demo.BandwidthState{{LastRefillNanos: time.Now().UnixNano(), Tokens: 3}}})
	f, err := vertique.Family(schema.BuiltinPack("vertique"))
	if err != nil {
		t.Fatal(err)
	}
	secret := []byte("secret-now")
	for i := range 300 {
		if err := cc.Set(ctx, mustKey(t, f, secret, "p", "1", strconv.Itoa(i)), state, time.Hour).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range cl.Primaries() {
		if n, err := s.Client(0).DBSize(ctx).Result(); err != nil || n == 0 {
			t.Fatalf("DBSIZE on %s = %d, %v", s.Addr, n, err)
		}
	}
	conn, err := redisview.Open(redisview.ConnConfig{Name: "v", URL: cl.URL()}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.Detect(ctx); err != nil {
		t.Fatal(err)
	}
	conn.ForcePack(schema.BuiltinPack("vertique"))
	inv, err := vertique.Walk(ctx, conn, f, vertique.Fingerprint(secret), vertique.Budget{Scans: 100, Count: 50}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if !inv.Complete || len(inv.Generations) != 1 || inv.Generations[0].Keys != 300 {
		t.Fatalf("complete %v, generations %+v; want one of 300 buckets", inv.Complete, inv.Generations)
	}
}
