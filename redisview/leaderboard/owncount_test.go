package leaderboard_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview/leaderboard"
	"github.com/keydeck/keydeck/redisview/schema"
)

func totalCommands(t *testing.T, c *redis.Client) int64 {
	t.Helper()
	txt, err := c.Info(context.Background(), "stats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(txt, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "total_commands_processed:"); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	t.Fatal("no total_commands_processed")
	return 0
}

// The window script's inner calls (ZCARD, the range, one HSCAN per member
// with a metadata key) are reported as Keydeck's own commands, so the
// overview does not take them for the application's.
func TestScriptCallsCountAsKeydecksOwn(t *testing.T) {
	ctx := context.Background()
	rs := redistest.Start(t)
	db14 := rs.Client(14)
	const board = "mg:score:leaderboard:2048"
	for i, m := range []string{"alice", "bob", "ops:admin", "carol", ""} {
		db14.ZAdd(ctx, board, redis.Z{Score: float64(i), Member: m})
		if m != "" && m != "carol" {
			db14.HSet(ctx, "mg:score:user-meta:2048:"+m, "score", i)
		}
	}
	c := openConn(t, rs.URL(14))
	c.ForcePack(schema.BuiltinPack("eisland"))
	admin := rs.Client(0)
	t0, own0 := totalCommands(t, admin), c.OwnCount().Done
	for range 3 {
		w, err := leaderboard.Read(ctx, c, 14, board, 0, 50)
		if err != nil || w.Path != "lua" || len(w.Entries) != 5 {
			t.Fatalf("read via %q: %d entries, %v", w.Path, len(w.Entries), err)
		}
	}
	t1, own := totalCommands(t, admin), c.OwnCount()
	if own.Scripts != 0 {
		t.Fatalf("%d scripts left unreported", own.Scripts)
	}
	if got, want := own.Done-own0, t1-t0-1; got != want {
		t.Fatalf("Keydeck counted %d commands, the server ran %d", got, want)
	}
}
