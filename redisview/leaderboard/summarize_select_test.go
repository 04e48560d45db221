package leaderboard_test

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/leaderboard"
)

// Summarize selects each database in one pipeline: when a SELECT is
// refused (a least-privilege user: @read has no SELECT), the commands
// after it run on whichever database the connection is on, so db 0's
// board of the same name must not be shown as db 3's — db 3's summary
// says it was not read.
func TestSummarizeRefusedSelectShowsNoOtherDatabase(t *testing.T) {
	rs := redistest.Start(t)
	ctx := context.Background()
	if err := rs.Client(0).Do(ctx, "ACL", "SETUSER", "ro", "on", ">pw", "~*", "+@read", "+info", "+hello", "+client", "+ping", "+config|get").Err(); err != nil {
		t.Fatal(err)
	}
	rs.Client(0).ZAdd(ctx, "board", redis.Z{Score: 999, Member: "db0-player"})
	rs.Client(3).ZAdd(ctx, "board", redis.Z{Score: 1, Member: "db3-player"})
	c, err := redisview.Open(redisview.ConnConfig{Name: "t", URL: "redis://ro:pw@" + rs.Addr + "/0"}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	sums, err := leaderboard.Summarize(ctx, c, []leaderboard.Ref{{DB: 3, Key: "board"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sums {
		if s.TopMember == "db0-player" || (s.DB == 3 && s.Err == "") {
			t.Fatalf("db 3's board shown without its SELECT: %+v", s)
		}
	}
	if len(sums) != 1 {
		t.Fatalf("db 3's board is not said to be unread: %+v", sums)
	}
}
