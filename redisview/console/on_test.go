package console_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/redisview/console"
)

// On a cluster the console runs on the node picked, database 0 only: a
// key on another node answers MOVED, as redis-cli without -c shows it.
func TestOnClusterNode(t *testing.T) {
	cl := redistest.StartCluster(t)
	ctx := context.Background()
	conn, err := redisview.Open(redisview.ConnConfig{Name: "c", URL: cl.URL()}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.Detect(ctx); err != nil || !conn.IsCluster() {
		t.Fatalf("detect: %v", err)
	}
	kindTableReadOnce(t, cl, conn) // before the table is cached by the reads below
	cl.Client().Set(ctx, "k", "v", 0)
	owner := cl.NodeOf("k")
	var other *redistest.Server
	for _, p := range cl.Primaries() {
		if p.Addr != owner.Addr {
			other = p
		}
	}
	args := []string{"GET", "k"}
	for addr, want := range map[string]string{owner.Addr: "\"v\"\n", other.Addr: "(error) MOVED "} {
		on, err := console.At(ctx, conn, addr, 0)
		if err != nil {
			t.Fatal(err)
		}
		tab, err := on.Table(ctx)
		if err != nil {
			t.Fatal(err)
		}
		d, err := on.Decide(ctx, tab, console.Request{Args: args, Level: action.Viewer})
		if err != nil {
			t.Fatalf("%s: %v", addr, err)
		}
		// Read measures the key first: on the other node that meets MOVED,
		// which the command itself must show (review C L1).
		r, err := on.Read(ctx, d, args)
		if err != nil || !strings.HasPrefix(r.Text, want) {
			t.Errorf("GET k on %s: %q, %v; want %q", addr, r.Text, err, want)
		}
	}
	if _, err := console.At(ctx, conn, owner.Addr, 3); !errors.Is(err, console.ErrClusterDB) {
		t.Errorf("database 3 of a cluster: %v", err)
	}
	if _, err := console.At(ctx, conn, "10.255.255.1:7000", 0); !errors.Is(err, redisview.ErrUnknownNode) {
		t.Errorf("an address the cluster does not list: %v", err)
	}
}
