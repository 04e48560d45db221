package limits_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/limits"
	"github.com/keydeck/keydeck/redisview/schema"
)

// A sweep on a connection whose user may not run CONFIG (ACL, managed
// Redis) asks once, then not again for 30 s — not every second — and
// says whether notifications are on is unknown, not that they are off.
func TestSweepRefusedConfigBacksOff(t *testing.T) {
	rs := redistest.Start(t)
	if err := rs.Client(0).Do(context.Background(), "ACL", "SETUSER", "noconf", "on", ">pw", "~*", "&*", "+@all", "-config").Err(); err != nil {
		t.Fatal(err)
	}
	conn, err := redisview.Open(redisview.ConnConfig{Name: "t", URL: "redis://noconf:pw@" + rs.Addr + "/0"}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.ForcePack(schema.BuiltinPack("eisland"))
	pool := limits.NewPool(t.Context(), fast, time.Second)
	s, release := pool.Acquire(conn)
	defer release()
	redistest.Eventually(t, 5*time.Second, "the sweep's first read of notify-keyspace-events", func() bool {
		return s.Snapshot().Keyspace.Why != ""
	})
	if k := s.Snapshot().Keyspace; k.On || !strings.Contains(k.Why, "unknown") || !strings.Contains(k.Why, "not permitted") {
		t.Fatalf("keyspace %+v", k)
	}
	rs.Quiet(t, "config", 2500*time.Millisecond) // refused once: not asked again for 30 s
}
