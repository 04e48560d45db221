package stats_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/stats"
)

// TestSweepCountsEveryPrimary: a key sweep of a cluster connection (by
// script where it would be used, and by pipelines) reads every key of
// every primary: its count equals DBSIZE summed over the primaries.
func TestSweepCountsEveryPrimary(t *testing.T) {
	cl := redistest.StartCluster(t)
	ctx := context.Background()
	cc := cl.Client()
	p := cc.Pipeline()
	for i := range 2000 {
		p.HSet(ctx, fmt.Sprintf("h:%d", i), "f", "v")
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	var sum int64
	for _, s := range cl.Primaries() {
		n, err := s.Client(0).DBSize(ctx).Result()
		if err != nil || n == 0 {
			t.Fatalf("DBSIZE on %s = %d, %v", s.Addr, n, err)
		}
		sum += n
	}
	c, err := redisview.Open(redisview.ConnConfig{Name: "c", URL: "redis://" + cl.Nodes[2].Addr}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.Detect(ctx); err != nil {
		t.Fatal(err)
	}
	if got := stats.TotalKeys(ctx, c, 0); !got.OK || got.V != sum {
		t.Errorf("TotalKeys = %+v; DBSIZE over the primaries sums to %d", got, sum)
	}
	d, err := stats.SweepPass(ctx, c, 0)
	if err != nil {
		t.Fatal(err)
	}
	if d.UnmCount != sum {
		t.Errorf("the pass counted %d keys; DBSIZE over the primaries sums to %d", d.UnmCount, sum)
	}
}

// TestSweeperFollowsClusterDetection: a sweeper started before the
// connection learnt it is a cluster (the server was down at start, or a
// viewer came before the first probe) moves onto the cluster client when
// detection closes the standalone one: it counts every primary's keys
// (it failed with "redis: client is closed" forever).
func TestSweeperFollowsClusterDetection(t *testing.T) {
	cl := redistest.StartCluster(t)
	ctx := context.Background()
	cl.Fill("k:", 600)
	c, err := redisview.Open(redisview.ConnConfig{Name: "c", URL: "redis://" + cl.Nodes[0].Addr}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	sctx, cancel := context.WithCancel(ctx)
	pool := stats.NewSweepers(sctx, stats.SweepBudget{KeysPerSec: 100000, Count: 100}, time.Minute, slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(func() { cancel(); pool.Wait() })
	s, release := pool.Acquire(c, 0)
	defer release()
	s.WaitRead(ctx, 10*time.Second)
	if err := c.Detect(ctx); err != nil || !c.IsCluster() {
		t.Fatalf("detect: %v, cluster %v", err, c.IsCluster())
	}
	after := s.Detail(stats.TotalKeys(ctx, c, 0)).Pass
	var d stats.DBDetail
	redistest.Eventually(t, 20*time.Second, "a pass on the cluster client counting every primary", func() bool {
		d = s.Detail(stats.TotalKeys(ctx, c, 0))
		// The pass after detection: it counts every primary's keys
		// without error, so it ran on the cluster client (the primary the
		// standalone client reached holds about 200). No pass follows
		// while the database does not change (its signature now sums
		// every primary; it read a random node's, which differed).
		return d.Pass > after && d.Err == "" && d.UnmCount == 600
	})
}

// TestClusterSignatureSeesEveryPrimary: the signature that lets a sweep
// skip a pass of an unchanged database changes when a key changes on
// any primary, not only on the node the cluster client's INFO reached.
func TestClusterSignatureSeesEveryPrimary(t *testing.T) {
	cl := redistest.StartCluster(t)
	ctx := context.Background()
	c := openConn(t, cl.URL())
	if err := c.Detect(ctx); err != nil {
		t.Fatal(err)
	}
	sig, err := stats.ReadSignature(ctx, c.Client(), 0)
	if err != nil {
		t.Fatal(err)
	}
	for round := range 3 {
		for _, s := range cl.Primaries() {
			key := cl.KeyOn(s, fmt.Sprintf("sig:%d:", round))
			if err := s.Client(0).Set(ctx, key, "v", 0).Err(); err != nil {
				t.Fatal(err)
			}
			next, err := stats.ReadSignature(ctx, c.Client(), 0)
			if err != nil {
				t.Fatal(err)
			}
			if next == sig {
				t.Fatalf("a key written on %s left the signature unchanged: %+v", s.Addr, sig)
			}
			sig = next
		}
	}
}

// TestSweepPassAcrossAPrimaryRestartCountsEachKeyOnce: a primary restarted
// mid-pass is walked again from its start; the pass starts over rather
// than count that shard's keys twice, and its count equals DBSIZE.
func TestSweepPassAcrossAPrimaryRestartCountsEachKeyOnce(t *testing.T) {
	cl := redistest.StartCluster(t)
	ctx := context.Background()
	cl.Fill("k:", 6000)
	cl.WaitReplicated(30 * time.Second)
	c := openConn(t, cl.URL())
	if err := c.Detect(ctx); err != nil {
		t.Fatal(err)
	}
	sctx, cancel := context.WithCancel(ctx)
	// 300 keys a step over three primaries, two steps a second: a pass
	// takes about 10 s.
	pool := stats.NewSweepers(sctx, stats.SweepBudget{KeysPerSec: 600, Count: 100}, time.Minute, slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(func() { cancel(); pool.Wait() })
	s, release := pool.Acquire(c, 0)
	defer release()
	redistest.Eventually(t, 20*time.Second, "the first pass under way", func() bool {
		d := s.Detail(redisview.Opt[int64]{})
		return d.Pass == 0 && d.Seen >= 1200
	})
	p := cl.Primaries()[1]
	if err := cl.ReplicaOf(p).Client(0).ConfigSet(ctx, "cluster-replica-no-failover", "yes").Err(); err != nil {
		t.Fatal(err)
	}
	if err := p.Client(0).Save(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	p.Restart()
	cl.WaitOK(30 * time.Second)
	var d stats.DBDetail
	redistest.Eventually(t, 60*time.Second, "the first pass completed", func() bool {
		d = s.Detail(redisview.Opt[int64]{})
		return d.Pass >= 1
	})
	var sum int64
	for _, p := range cl.Primaries() {
		n, err := p.Client(0).DBSize(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		sum += n
	}
	if sum != 6000 {
		t.Fatalf("the cluster holds %d keys after the restart, not 6000", sum)
	}
	if d.UnmCount != 6000 {
		t.Errorf("the pass across a primary's restart counted %d keys; the cluster holds 6000 (%+v)", d.UnmCount, d)
	}
}
