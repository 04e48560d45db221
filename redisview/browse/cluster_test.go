package browse_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/browse"
	"github.com/keydeck/keydeck/redisview/schema"
)

// takes records what a list takes from its budget.
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

// TestClusterListChargesEveryPrimary: a step of a key list on a cluster
// scans COUNT keys on each primary, so the budget is charged COUNT for
// each SCAN sent, not once per step.
func TestClusterListChargesEveryPrimary(t *testing.T) {
	cl := redistest.StartCluster(t)
	ctx := context.Background()
	cl.Fill("fill:", 3000)
	conn, err := redisview.Open(redisview.ConnConfig{Name: "t", URL: cl.URL()}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if err := conn.Detect(ctx); err != nil {
		t.Fatal(err)
	}
	pk, err := schema.Load("browsetest", []byte(strings.TrimLeft(testPack, "\n")))
	if err != nil {
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
	pg, err := browse.List(ctx, conn, 0, browse.Request{Family: pk.Family("bucket"), Classifier: pk.Classifier(), MaxScans: 3, Count: 10, Budget: b})
	if err != nil {
		t.Fatal(err)
	}
	sent := scans() - scan0
	if pg.Scans != 3 || sent != 9 || b.keys != sent*10 {
		t.Fatalf("%d steps sent %d SCAN of COUNT 10; the budget was charged %d keys, want %d", pg.Scans, sent, b.keys, sent*10)
	}
}
