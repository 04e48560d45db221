package demo

import (
	"context"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// fakeClock is moved by the test, so the simulator's timestamps are exact.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func snapshotZSets(t *testing.T, c redis.Cmdable, keys ...string) map[string][]redis.Z {
	t.Helper()
	out := map[string][]redis.Z{}
	for _, k := range keys {
		z, err := c.ZRevRangeWithScores(context.Background(), k, 0, -1).Result()
		if err != nil {
			t.Fatal(err)
		}
		out[k] = z
	}
	return out
}

func snapshotStrings(t *testing.T, c *redis.Client, pattern string) map[string]string {
	t.Helper()
	ctx := context.Background()
	out := map[string]string{}
	iter := c.Scan(ctx, 0, pattern, 1000).Iterator()
	for iter.Next(ctx) {
		v, err := c.Get(ctx, iter.Val()).Result()
		if err != nil {
			t.Fatal(err)
		}
		out[iter.Val()] = v
	}
	return out
}

func TestSimulatorStepsChangeTheData(t *testing.T) {
	t.Parallel()
	eis, gw, vq := redistest.Start(t), redistest.Start(t), redistest.Start(t)
	ctx := context.Background()
	clock := &fakeClock{t: time.Now()}
	eisland := eislandClients(eis)
	if err := SeedEIsland(ctx, eisland, clock.t); err != nil {
		t.Fatal(err)
	}
	if err := SeedGateway(ctx, gw.Client(0), clock.t); err != nil {
		t.Fatal(err)
	}
	if err := SeedVertique(ctx, vq.Client(0), clock.t, DemoSecret); err != nil {
		t.Fatal(err)
	}
	var boards []string
	for _, g := range games {
		boards = append(boards, "mg:score:leaderboard:"+g.ID)
	}
	boardsBefore := snapshotZSets(t, eis.Client(14), boards...)
	balancesBefore := snapshotStrings(t, eis.Client(12), "agent:balance:*")
	bucketsBefore := snapshotStrings(t, vq.Client(0), "*")
	rpsBefore, _ := gw.Client(0).HGetAll(ctx, "q:rps:"+gatewayKeyIDs[0]).Result()

	sim := NewSimulator(eisland, gw.Client(0), vq.Client(0), rand.New(rand.NewPCG(1, 2)), clock.now)
	for i := range 150 {
		clock.t = clock.t.Add(400 * time.Millisecond)
		if err := sim.Step(ctx); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}

	if reflect.DeepEqual(boardsBefore, snapshotZSets(t, eis.Client(14), boards...)) {
		t.Error("no leaderboard changed")
	}
	for _, b := range boards {
		if n, _ := eis.Client(14).ZCard(ctx, b).Result(); n > LeaderboardSize {
			t.Errorf("%s has %d members, pruning to %d failed", b, n, LeaderboardSize)
		}
	}
	balancesAfter := snapshotStrings(t, eis.Client(12), "agent:balance:*")
	if reflect.DeepEqual(balancesBefore, balancesAfter) {
		t.Error("no balance changed")
	}
	for k, v := range balancesAfter {
		if f, err := strconv.ParseFloat(v, 64); err != nil || f < 0 || !strings.Contains(v, ".") || len(v)-strings.Index(v, ".") != 9 {
			t.Errorf("%s = %q, want a non-negative decimal with 8 places", k, v)
		}
	}
	changed := 0
	for k, v := range snapshotStrings(t, vq.Client(0), "*") {
		if bucketsBefore[k] != v {
			changed++
			if _, err := decodeBucketState([]byte(v)); err != nil {
				t.Errorf("%s: simulator wrote an undecodable state: %v", k, err)
			}
		}
	}
	if changed == 0 {
		t.Error("no vertique bucket was consumed")
	}
	if rpsAfter, _ := gw.Client(0).HGetAll(ctx, "q:rps:"+gatewayKeyIDs[0]).Result(); reflect.DeepEqual(rpsBefore, rpsAfter) {
		t.Error("the noisy gateway key's bucket never moved")
	}
	for _, c := range []struct {
		client  *redis.Client
		pattern string
	}{
		{eis.Client(6), "auth:limit:login:lock:*"},
		{eis.Client(4), "verify:slider:challenge:*"},
		{eis.Client(4), "verify:slider:sign:*"},
		{eis.Client(14), "mg:score:session:*"},
		{gw.Client(0), "q:reserved:*"},
	} {
		if len(snapshotStrings(t, c.client, c.pattern)) == 0 {
			t.Errorf("no %s after the simulation", c.pattern)
		}
	}
}

func TestSimulatorToleratesADownServer(t *testing.T) {
	t.Parallel()
	eis := redistest.Start(t)
	down := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialerRetries: 1,
		DialTimeout: 100 * time.Millisecond})
	t.Cleanup(func() { _ = down.Close() })
	clock := &fakeClock{t: time.Now()}
	sim := NewSimulator(eislandClients(eis), down, down, rand.New(rand.NewPCG(3, 4)), clock.now)
	sawError := false
	for range 6 {
		clock.t = clock.t.Add(400 * time.Millisecond)
		if sim.Step(context.Background()) != nil {
			sawError = true
		}
	}
	if !sawError {
		t.Error("steps against a down server reported no error")
	}
	if n, _ := eis.Client(14).DBSize(context.Background()).Result(); n == 0 {
		t.Error("the healthy server got no traffic while the others were down")
	}
}

func TestDeductNeverGoesNegative(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	ctx := context.Background()
	c := s.Client(12)
	if err := c.Set(ctx, "agent:balance:alice.w", "1.00000000", 0).Err(); err != nil {
		t.Fatal(err)
	}
	noInit := func() string { t.Fatal("initialised an existing balance"); return "" }
	for _, want := range []string{"0.70000000|0.30000000", "0.40000000|0.30000000", "0.10000000|0.30000000",
		"0.00000000|0.10000000", "-3", "-3"} {
		got, err := deductBalance(ctx, c, "alice.w", "0.30000000", noInit)
		if err != nil || got != want {
			t.Fatalf("deduct 0.3: got %q, %v; want %q", got, err, want)
		}
	}
	if got, _ := AgentBalanceDeduct.Run(ctx, c, []string{"agent:balance:nobody"}, "1.00000000").Text(); got != "-1" {
		t.Errorf("missing balance: got %q, want -1", got)
	}
	got, err := deductBalance(ctx, c, "nobody", "2.50000000", func() string { return "2.00000000" })
	if err != nil || got != "0.00000000|2.00000000" {
		t.Errorf("SETNX initialisation then deduct: got %q, %v", got, err)
	}

	rng := rand.New(rand.NewPCG(5, 6))
	for i := range 300 {
		user := "u" + strconv.Itoa(i%7)
		if rng.IntN(20) == 0 {
			c.Set(ctx, "agent:balance:"+user, balance(rng.Float64()*5), 0)
		}
		amount := balance(rng.Float64() * rng.Float64() * 3)
		if _, err := deductBalance(ctx, c, user, amount, func() string { return balance(rng.Float64() * 10) }); err != nil {
			t.Fatal(err)
		}
		v, _ := c.Get(ctx, "agent:balance:"+user).Float64()
		if v < 0 {
			t.Fatalf("balance of %s went negative: %v", user, v)
		}
	}
}

// The slider bot and the gateway burst leave a slider bucket and a gateway
// RPS bucket empty: the Rate limits page has throttled buckets to show.
func TestSimulatorBurstsThrottle(t *testing.T) {
	eis, gw, vq := redistest.Start(t), redistest.Start(t), redistest.Start(t)
	ctx := context.Background()
	now := time.Now()
	sim := NewSimulator(eislandClients(eis), gw.Client(0), vq.Client(0), rand.New(rand.NewPCG(3, 4)), func() time.Time { return now })
	for range 13 { // the bot's steps: 13 hits on a 12-token bucket
		if err := sim.sliderBotHit(ctx, now); err != nil {
			t.Fatal(err)
		}
	}
	if err := sim.burst(ctx, now); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		client *redis.Client
		key    string
	}{
		{eis.Client(4), "verify:slider:rate:create:account:" + SliderKeyPart(sliderBot)},
		{gw.Client(0), "q:rps:" + gatewayKeyIDs[0]},
	} {
		v, err := c.client.HGet(ctx, c.key, "tokens").Float64()
		if err != nil || v >= 1 {
			t.Errorf("%s: tokens %v (%v), want an empty bucket", c.key, v, err)
		}
	}
}
