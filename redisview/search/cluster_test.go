package search_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/search"
)

// TestSearchWalksEveryPrimary: a glob search of a cluster connection,
// continued through its continue link's text until it ends, finds every
// key of every primary (one cursor per primary inside the link), as many
// as DBSIZE sums to; a standalone server's link keeps its plain cursor.
func TestSearchWalksEveryPrimary(t *testing.T) {
	cl := redistest.StartCluster(t)
	ctx := context.Background()
	cl.Fill("k:", 3000)
	var sum int64
	for _, s := range cl.Primaries() {
		n, err := s.Client(0).DBSize(ctx).Result()
		if err != nil || n == 0 {
			t.Fatalf("DBSIZE on %s = %d, %v", s.Addr, n, err)
		}
		sum += n
	}
	c, err := redisview.Open(redisview.ConnConfig{Name: "c", URL: cl.URL()}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.Detect(ctx); err != nil {
		t.Fatal(err)
	}
	lim := search.Limits{Calls: 2, Count: 100, Cap: 100000, Time: 10 * time.Second}
	seen := map[string]bool{}
	cont := ""
	for req := 0; ; req++ {
		cursors, err := search.ParseCursors(cont)
		if err != nil {
			t.Fatalf("continue %q: %v", cont, err)
		}
		r, err := search.Run(ctx, c, search.Parse("k:*", c.Pack()), cursors, lim)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range r.Hits {
			seen[h.Key] = true
		}
		cont = r.Cursors()
		if req == 0 && strings.Count(cont, "s") != 3 {
			t.Errorf("the first continue link %q: want one cursor per primary", cont)
		}
		if cont == "" {
			break
		}
		if req > 200 {
			t.Fatal("the search does not end")
		}
	}
	if int64(len(seen)) != sum {
		t.Fatalf("the search found %d keys; DBSIZE over the primaries sums to %d", len(seen), sum)
	}
}

// A standalone server's continue link is "db.n:cursor,…" as before.
func TestSearchContinueLinkStandalone(t *testing.T) {
	rs, c := seeded(t)
	ctx := context.Background()
	p := rs.Client(7).Pipeline()
	for i := range 1500 {
		p.Set(ctx, fmt.Sprintf("bulk:%05d", i), i, 0)
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	r := run(t, c, "bulk:*", nil, search.Limits{Calls: 1, Count: 50, Cap: 5000, Time: time.Second})
	cont := r.Cursors()
	if !strings.Contains(cont, "7.0:") {
		t.Fatalf("continue link %q: no cursor of db7", cont)
	}
	for _, part := range strings.Split(cont, ",") {
		id, cur, ok := strings.Cut(part, ":")
		if !ok || id == "" || cur == "" || strings.Trim(cur, "0123456789") != "" {
			t.Fatalf("continue link %q, want db.n:cursor parts", cont)
		}
	}
}

// takes records what a search takes from its budget.
type takes struct {
	mu   sync.Mutex
	keys int64
}

func (b *takes) Take(_ context.Context, keys int64) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.keys += keys
	return nil
}

// TestClusterSearchChargesEveryPrimary: a search step on a cluster scans
// COUNT keys on each primary, so the budget is charged COUNT for each
// SCAN sent, not once per step.
func TestClusterSearchChargesEveryPrimary(t *testing.T) {
	cl := redistest.StartCluster(t)
	ctx := context.Background()
	cl.Fill("k:", 3000)
	c, err := redisview.Open(redisview.ConnConfig{Name: "c", URL: cl.URL()}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.Detect(ctx); err != nil {
		t.Fatal(err)
	}
	scans := func() (n int64) {
		for _, s := range cl.Nodes {
			m, err := s.CommandCalls(ctx)
			if err != nil {
				t.Fatal(err)
			}
			n += m["scan"]
		}
		return n
	}
	b := &takes{}
	scan0 := scans()
	lim := search.Limits{Calls: 2, Count: 10, Cap: 100000, Time: 10 * time.Second, Budget: b}
	if _, err := search.Run(ctx, c, search.Parse("k:*", c.Pack()), nil, lim); err != nil {
		t.Fatal(err)
	}
	sent := scans() - scan0
	if sent != 6 || b.keys != sent*10 {
		t.Fatalf("the search sent %d SCAN of COUNT 10; the budget was charged %d keys, want %d", sent, b.keys, sent*10)
	}
}
