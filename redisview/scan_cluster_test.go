package redisview_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
)

// loadCluster writes n keys "k:<i>" through a cluster client and returns
// the sum of DBSIZE over the primaries.
func loadCluster(t *testing.T, cl *redistest.Cluster, n int) int64 {
	t.Helper()
	ctx := context.Background()
	cl.Fill("k:", n)
	var sum int64
	for _, s := range cl.Primaries() {
		sz, err := s.Client(0).DBSize(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		if sz == 0 {
			t.Fatalf("primary %s holds no key", s.Addr)
		}
		sum += sz
	}
	return sum
}

// TestScanStepWalksEveryPrimary: a walk with ScanStep on a cluster
// connection sees every key of every primary (one cursor per primary,
// three in the first step's position), as many as DBSIZE sums to.
func TestScanStepWalksEveryPrimary(t *testing.T) {
	cl := redistest.StartCluster(t)
	sum := loadCluster(t, cl, 3000)
	ctx := context.Background()
	c := openURL(t, cl.URL())
	if err := c.Detect(ctx); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	cur, steps := redisview.CursorStart, 0
	for {
		keys, next, err := redisview.ScanStep(ctx, c.Client(), cur, "k:*", 100, "")
		if err != nil {
			t.Fatal(err)
		}
		if steps == 0 && strings.Count(string(next), ":") != 3 {
			t.Errorf("the first step's position %q, want one cursor per primary", next)
		}
		if _, err := redisview.ParseCursor(string(next)); err != nil {
			t.Fatalf("position %q does not parse: %v", next, err)
		}
		steps++
		for _, k := range keys {
			seen[k] = true
		}
		cur = next
		if cur.Done() {
			break
		}
		if steps > 1000 {
			t.Fatal("the walk does not end")
		}
	}
	if int64(len(seen)) != sum || sum != 3000 {
		t.Fatalf("the walk saw %d keys; DBSIZE over the primaries sums to %d (3000 written)", len(seen), sum)
	}
	// A string type filter on every node too.
	keys, _, err := redisview.ScanStep(ctx, c.Client(), redisview.CursorStart, "", 10000, "hash")
	if err != nil || len(keys) != 0 {
		t.Fatalf("TYPE hash: %d keys, %v", len(keys), err)
	}
	if _, _, err := redisview.ScanStep(ctx, c.Client(), "s1:x", "", 10, ""); err == nil {
		t.Fatal("a malformed position: no error")
	}
}

// TestScanStepCostsOnlyScans: once a walk has begun, a step of a cluster
// walk sends SCANs and nothing else — no CLUSTER SLOTS per step.
func TestScanStepCostsOnlyScans(t *testing.T) {
	cl := redistest.StartCluster(t)
	loadCluster(t, cl, 3000)
	ctx := context.Background()
	c := openURL(t, cl.URL())
	if err := c.Detect(ctx); err != nil {
		t.Fatal(err)
	}
	calls := func() (slots, scans int64) {
		for _, s := range cl.Nodes {
			m, err := s.CommandCalls(ctx)
			if err != nil {
				t.Fatal(err)
			}
			slots += m["cluster|slots"]
			scans += m["scan"]
		}
		return
	}
	_, cur, err := redisview.ScanStep(ctx, c.Client(), redisview.CursorStart, "", 10, "")
	if err != nil {
		t.Fatal(err)
	}
	slots0, scans0 := calls()
	for range 5 {
		if _, cur, err = redisview.ScanStep(ctx, c.Client(), cur, "", 10, ""); err != nil {
			t.Fatal(err)
		}
	}
	slots1, scans1 := calls()
	if slots1 != slots0 || scans1-scans0 != 15 {
		t.Fatalf("5 steps sent %d CLUSTER SLOTS and %d SCAN; want 0 and 15", slots1-slots0, scans1-scans0)
	}
}

// TestScanStepRefusesAnotherKindsPosition: a single server's cursor on a
// cluster, or a cluster's on a single server (an old link after a move),
// is a bad position (ErrBadCursor), not a read error.
func TestScanStepRefusesAnotherKindsPosition(t *testing.T) {
	cl := redistest.StartCluster(t)
	s := redistest.Start(t)
	ctx := context.Background()
	cc := openURL(t, cl.URL())
	if err := cc.Detect(ctx); err != nil {
		t.Fatal(err)
	}
	one := openURL(t, s.URL(0))
	for _, tc := range []struct {
		c   *redisview.Conn
		cur redisview.Cursor
	}{{cc, "1234"}, {one, "s0:12,s5461:0"}} {
		_, _, err := redisview.ScanStep(ctx, tc.c.Client(), tc.cur, "", 10, "")
		if !errors.Is(err, redisview.ErrBadCursor) || errors.Is(err, redisview.ErrRead) {
			t.Errorf("ScanStep from %q: %v, want ErrBadCursor", tc.cur, err)
		}
		if _, err := redisview.StepWidth(ctx, tc.c.Client(), tc.cur); !errors.Is(err, redisview.ErrBadCursor) {
			t.Errorf("StepWidth of %q: %v, want ErrBadCursor", tc.cur, err)
		}
	}
}
