package leaderboard_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/clock"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview/leaderboard"
	"github.com/keydeck/keydeck/redisview/schema"
)

// The index scans in the background under the context it is given, and
// Wait awaits it; after Wait no scan starts.
func TestIndex(t *testing.T) {
	rs := redistest.Start(t)
	ctx := context.Background()
	if err := rs.Client(14).ZAdd(ctx, "mg:score:leaderboard:2048", redis.Z{Score: 1, Member: "a"}).Err(); err != nil {
		t.Fatal(err)
	}
	c := openConn(t, rs.URL(0))
	c.ForcePack(schema.BuiltinPack("eisland"))

	sctx, cancel := context.WithCancel(ctx)
	x := leaderboard.NewIndex(sctx)
	refs, truncated, err := x.Refs(c, 5*time.Second)
	if err != nil || truncated || len(refs) != 1 || refs[0].DB != 14 || refs[0].Key != "mg:score:leaderboard:2048" {
		t.Fatalf("first Refs: %v %v %v", refs, truncated, err)
	}
	// Known keys are served at once, without waiting for Redis.
	if refs, _, _ := x.Refs(c, 0); len(refs) != 1 {
		t.Fatalf("second Refs: %v", refs)
	}
	cancel()
	x.Wait()

	// A connection first asked for after shutdown is not scanned.
	other := openConn(t, rs.URL(0))
	other.Name = "other"
	other.ForcePack(schema.BuiltinPack("eisland"))
	if refs, _, err := x.Refs(other, time.Second); len(refs) != 0 || err != nil {
		t.Fatalf("Refs after Wait: %v %v", refs, err)
	}
}

// The index rescans on its clock: known keys are served until Rescan has
// passed on it, then a scan finds the new ones. A fake clock drives it;
// the wall clock would not move 30 s during the test.
func TestIndexRescansOnItsClock(t *testing.T) {
	rs := redistest.Start(t)
	ctx := context.Background()
	if err := rs.Client(14).ZAdd(ctx, "mg:score:leaderboard:2048", redis.Z{Score: 1, Member: "a"}).Err(); err != nil {
		t.Fatal(err)
	}
	c := openConn(t, rs.URL(0))
	c.ForcePack(schema.BuiltinPack("eisland"))
	fake := clock.NewFake(time.Time{})
	sctx, cancel := context.WithCancel(ctx)
	x := leaderboard.NewIndex(sctx, leaderboard.WithClock(fake))
	defer func() { cancel(); x.Wait() }()
	if refs, _, err := x.Refs(c, 5*time.Second); err != nil || len(refs) != 1 {
		t.Fatalf("first Refs: %v %v", refs, err)
	}
	if err := rs.Client(14).ZAdd(ctx, "mg:score:leaderboard:4096", redis.Z{Score: 1, Member: "a"}).Err(); err != nil {
		t.Fatal(err)
	}
	fake.Advance(leaderboard.Rescan - time.Second)
	if refs, _, _ := x.Refs(c, 0); len(refs) != 1 {
		t.Fatalf("rescanned before Rescan passed on the index's clock: %v", refs)
	}
	fake.Advance(2 * time.Second)
	redistest.Eventually(t, 10*time.Second, "a rescan once Rescan has passed on the index's clock", func() bool {
		refs, _, _ := x.Refs(c, 0)
		return len(refs) == 2
	})
}
