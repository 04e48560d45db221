package action

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"testing"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
)

// BenchmarkPreview measures a preview (the reads an action's confirmation
// repeats under WATCH) of a 1,000-field hash: whole key by DUMP, whole key
// by snapshot (a user without DUMP/RESTORE), and one field of it.
// go test -run - -bench Preview ./redisview/action
func BenchmarkPreview(b *testing.B) {
	rs := redistest.Start(b)
	ctx := context.Background()
	c := rs.Client(0)
	if err := c.Do(ctx, "acl", "setuser", "nodump", "on", ">pw", "~*", "&*", "+@all", "-dump", "-restore").Err(); err != nil {
		b.Fatal(err)
	}
	var fv []any
	for i := range 1000 {
		fv = append(fv, "field:"+strconv.Itoa(i), fmt.Sprintf("value-%06d", i))
	}
	c.HSet(ctx, "h", fv...)
	r := New(rs.Client(15), Options{})
	open := func(url string) *redisview.Conn {
		conn, err := redisview.Open(redisview.ConnConfig{Name: "main", URL: url}, slog.New(slog.DiscardHandler))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = conn.Close() })
		return conn
	}
	for _, c := range []struct {
		name, url, kind string
		args            map[string]string
	}{
		{"whole-key-dump", rs.URL(0), KindDeleteKey, nil},
		{"whole-key-snapshot", fmt.Sprintf("redis://nodump:pw@%s/0", rs.Addr), KindDeleteKey, nil},
		{"hash-field", rs.URL(0), KindRemoveHashField, map[string]string{ArgField: "field:500"}},
	} {
		conn := open(c.url)
		req := Request{Conn: "main", DB: 0, Key: "h", Args: c.args}
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := r.Preview(ctx, admin, conn, c.kind, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
