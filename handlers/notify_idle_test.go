package handlers_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/internal/server"
)

// configCalls: CONFIG commands the server ran or refused (INFO
// commandstats; Redis 7 counts cmdstat_config|get apart).
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

// A console nobody looks at, on a server with keyspace notifications off,
// does not ask for notify-keyspace-events every second (the connection's
// keyspace watcher runs for the console's life): at most once per 30 s.
func TestNoConfigPollingWithoutViewers(t *testing.T) {
	rs := redistest.Start(t)
	f := startConsole(t, rs, server.Config{}, nil).up(t)
	deadline := time.Now().Add(5 * time.Second)
	for f.reg.All()[0].Keyspace().Checked.IsZero() {
		if time.Now().After(deadline) {
			t.Fatal("the keyspace watcher never read notify-keyspace-events")
		}
		time.Sleep(10 * time.Millisecond)
	}
	n0 := configCalls(t, rs)
	time.Sleep(2500 * time.Millisecond) // a window to count in, not a wait for a condition
	if d := configCalls(t, rs) - n0; d > 0 {
		t.Fatalf("%d CONFIG commands in 2.5 s with no viewer", d)
	}
}
