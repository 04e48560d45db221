package handlers_test

import (
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/internal/server"
)

// A console nobody looks at, on a server with keyspace notifications off,
// does not ask for notify-keyspace-events every second (the connection's
// keyspace watcher runs for the console's life): at most once per 30 s.
func TestNoConfigPollingWithoutViewers(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	f := startConsole(t, rs, server.Config{}, nil).up(t)
	redistest.Eventually(t, 5*time.Second, "the keyspace watcher's first read of notify-keyspace-events", func() bool {
		return !f.reg.All()[0].Keyspace().Checked.IsZero()
	})
	rs.Quiet(t, "config", 2500*time.Millisecond) // with no viewer
}
