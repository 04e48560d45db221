package search

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/schema"
)

// A least-privilege user may read db 0 without the right to SELECT
// (SELECT is in @connection, not @read): the user page's role reads of
// db 0 keys must not send it, as a key page's decode does not.
func TestDecodeManyNeedsNoSelectForDatabaseZero(t *testing.T) {
	rs := redistest.Start(t)
	ctx := context.Background()
	if err := rs.Client(0).Do(ctx, "ACL", "SETUSER", "ro", "on", ">pw", "~*", "+@read", "+info", "+hello", "+client", "+ping", "+config|get").Err(); err != nil {
		t.Fatal(err)
	}
	rs.Client(0).SetBit(ctx, "version:app:bloom", 3, 1)
	c, err := redisview.Open(redisview.ConnConfig{Name: "t", URL: "redis://ro:pw@" + rs.Addr + "/0"}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.ForcePack(schema.BuiltinPack("eisland"))
	m, ok := c.Classifier().Match(0, "version:app:bloom")
	if !ok {
		t.Fatal("version:app:bloom is not in the eisland pack")
	}
	out := decodeMany(ctx, c, []decodeReq{{DB: 0, Key: "version:app:bloom", M: m}}, time.Now())
	if out[0].Err != nil || out[0].Result.State == nil {
		t.Fatalf("the bloom of db 0 was not read: %v (%+v)", out[0].Err, out[0].Result)
	}
}
