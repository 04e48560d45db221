package limits_test

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/limits"
	"github.com/keydeck/keydeck/redisview/schema"
)

// configCalls: CONFIG commands run or refused (INFO commandstats, Redis 7
// counting subcommands apart: cmdstat_config|get).
func configCalls(t *testing.T, rs *redistest.Server) int {
	t.Helper()
	txt, err := rs.Client(0).Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(txt, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || name != "cmdstat_config" && !strings.HasPrefix(name, "cmdstat_config|") {
			continue
		}
		for _, kv := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(kv, "=")
			if k == "calls" || k == "rejected_calls" {
				x, _ := strconv.Atoi(v)
				n += x
			}
		}
	}
	return n
}

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
	deadline := time.Now().Add(5 * time.Second)
	for s.Snapshot().Keyspace.Why == "" {
		if time.Now().After(deadline) {
			t.Fatal("the sweep never read notify-keyspace-events")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if k := s.Snapshot().Keyspace; k.On || !strings.Contains(k.Why, "unknown") || !strings.Contains(k.Why, "not permitted") {
		t.Fatalf("keyspace %+v", k)
	}
	n0 := configCalls(t, rs)
	time.Sleep(2500 * time.Millisecond) // a window to count in, not a wait for a condition
	if d := configCalls(t, rs) - n0; d > 0 {
		t.Fatalf("%d refused CONFIG commands in 2.5 s", d)
	}
}
