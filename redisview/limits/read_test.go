package limits_test

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/limits"
	"github.com/keydeck/keydeck/redisview/schema"
)

// Read() says every family has been read once: a sweeper that starts
// before its connection has a pack (detection still sampling) has read
// nothing, so Read stays open until a round with the pack.
func TestReadNotClosedBeforeAPassWithAPack(t *testing.T) {
	rs := redistest.Start(t)
	conn, err := redisview.Open(redisview.ConnConfig{Name: "t", URL: rs.URL(0)}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	pool := limits.NewPool(t.Context(), fast, time.Second)
	s, release := pool.Acquire(conn)
	defer release()
	redistest.Eventually(t, 5*time.Second, "the sweeper started", func() bool { return !s.Snapshot().Started.IsZero() })
	// The sweeper's loop runs at once; give it a few rounds without a pack.
	select {
	case <-s.Read():
		t.Fatal("Read() closed while the connection has no pack: nothing was read")
	case <-time.After(300 * time.Millisecond):
	}
	conn.ForcePack(schema.BuiltinPack("eisland"))
	select {
	case <-s.Read():
	case <-time.After(10 * time.Second):
		t.Fatal("Read() not closed 10 s after the pack was set")
	}
	snap := s.Snapshot()
	if snap.Pack == nil || len(snap.Families) == 0 {
		t.Fatalf("Read() closed with pack %v, %d families", snap.Pack, len(snap.Families))
	}
	for _, f := range snap.Families {
		if !f.Read {
			t.Errorf("Read() closed before %s (db%d) was read", f.Family.ID, f.DB)
		}
	}
}
