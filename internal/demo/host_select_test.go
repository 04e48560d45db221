package demo

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/redistest"
)

// The demo has Redis's 16 databases, as a real server does: SELECT beyond
// them is refused with Redis's words, and CONFIG GET databases says 16.
func TestDemoHasSixteenDatabases(t *testing.T) {
	ctx := context.Background()
	th := startHost(t)
	rs := redistest.Start(t)
	for name, c := range map[string]*redis.Client{"demo": th.client(0, 2), "redis": rs.Client(0)} {
		if err := c.Do(ctx, "SELECT", "15").Err(); err != nil {
			t.Fatalf("%s: SELECT 15: %v", name, err)
		}
		if err := c.Do(ctx, "SELECT", "16").Err(); err == nil || err.Error() != "ERR DB index is out of range" {
			t.Fatalf("%s: SELECT 16 = %v", name, err)
		}
		if got := c.ConfigGet(ctx, "databases").Val()["databases"]; got != "16" {
			t.Fatalf("%s: CONFIG GET databases = %q", name, got)
		}
	}
}
