package demo

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/redistest"
)

// orphans lists the reservations whose request id is in no concurrency set.
func orphans(t *testing.T, c *redis.Client) []string {
	t.Helper()
	ctx := context.Background()
	var sets []string
	for it := c.Scan(ctx, 0, "q:conc:*", 1000).Iterator(); it.Next(ctx); {
		sets = append(sets, it.Val())
	}
	var out []string
	for it := c.Scan(ctx, 0, "q:reserved:*", 1000).Iterator(); it.Next(ctx); {
		id := strings.TrimPrefix(it.Val(), "q:reserved:")
		in := false
		for _, s := range sets {
			in = in || c.SIsMember(ctx, s, id).Val()
		}
		if !in {
			out = append(out, id)
		}
	}
	return out
}

// The seed leaves one reservation behind (with a TTL, in no set) beside
// the no-TTL violation, and the simulator's reconciliations leave more from
// time to time: each in no concurrency set, each with its TTL.
func TestSimulatorLeavesOrphanedReservations(t *testing.T) {
	t.Parallel()
	gw := redistest.Start(t)
	ctx := context.Background()
	c := gw.Client(0)
	clock := &fakeClock{t: time.Now()}
	if err := SeedGateway(ctx, c, clock.t); err != nil {
		t.Fatal(err)
	}
	seeded := orphans(t, c)
	if len(seeded) != 2 || !contains(seeded, OrphanReservationID) {
		t.Fatalf("seeded orphans %q, want the left-behind one and the no-TTL one", seeded)
	}
	if d := c.PTTL(ctx, "q:reserved:"+OrphanReservationID).Val(); d <= 0 || d > 3*time.Minute {
		t.Fatalf("left-behind reservation PTTL %v, want one set over a minute ago", d)
	}
	sim := NewSimulator(func(int) redis.Cmdable { return gw.Client(15) }, c, gw.Client(14), rand.New(rand.NewPCG(7, 8)), clock.now)
	for range 400 {
		clock.t = clock.t.Add(500 * time.Millisecond)
		_ = sim.Step(ctx)
	}
	var fresh []string
	for _, id := range orphans(t, c) {
		if !contains(seeded, id) {
			fresh = append(fresh, id)
			if d := c.PTTL(ctx, "q:reserved:"+id).Val(); d <= 0 {
				t.Errorf("orphan %s has PTTL %v: the forgetful path still writes a TTL", id, d)
			}
		}
	}
	if len(fresh) == 0 {
		t.Fatal("the simulator left no reservation behind in 200 s of traffic")
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
