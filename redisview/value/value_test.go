package value_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/redisview/value"
)

func open(t *testing.T) (*redisview.Conn, *redis.Client) {
	t.Helper()
	rs := redistest.Start(t)
	c, err := redisview.Open(redisview.ConnConfig{Name: "t", URL: rs.URL(0)}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, rs.Client(0)
}

func read(t *testing.T, c *redisview.Conn, key string, req value.Request) value.Page {
	t.Helper()
	pg, err := value.Read(context.Background(), c, 0, key, req)
	if err != nil {
		t.Fatalf("%s %+v: %v", key, req, err)
	}
	return pg
}

// A string is read up to 64 KiB, with its full length, bytes intact.
func TestStringBoundedAndByteExact(t *testing.T) {
	c, db := open(t)
	ctx := context.Background()
	big := strings.Repeat("ab", 100<<10)
	db.Set(ctx, "big", big, 0)
	db.Set(ctx, "bin", "\xff\x00\xfe<b>", 0)
	pg := read(t, c, "big", value.Request{})
	if pg.Type != "string" || pg.Length != int64(len(big)) || len(pg.String) != value.MaxString || pg.String != big[:value.MaxString] {
		t.Fatalf("big string: type %s length %d read %d", pg.Type, pg.Length, len(pg.String))
	}
	if pg := read(t, c, "bin", value.Request{Type: "string"}); pg.String != "\xff\x00\xfe<b>" || pg.Length != 6 {
		t.Fatalf("binary string: %q %d", pg.String, pg.Length)
	}
}

// Hash pages follow the HSCAN cursor until every field was seen once;
// huge values are cut with their length kept; invalid UTF-8 survives.
func TestHashPagesAndTruncation(t *testing.T) {
	c, db := open(t)
	ctx := context.Background()
	for i := range 250 {
		db.HSet(ctx, "h", fmt.Sprintf("f%03d", i), i)
	}
	db.HSet(ctx, "h", "huge", strings.Repeat("x", 1<<20), "bad\xff", "v\xfe")
	seen := map[string]bool{}
	at, pages := "", 0
	for {
		pg := read(t, c, "h", value.Request{At: at})
		pages++
		if pg.Length != 252 || !pg.Scanned || len(pg.Elements) > 2*value.PageSize {
			t.Fatalf("page %d: length %d, %d elements", pages, pg.Length, len(pg.Elements))
		}
		for _, e := range pg.Elements {
			seen[e.Name.Bytes] = true
			switch e.Name.Bytes {
			case "huge":
				if e.Value.Len != 1<<20 || len(e.Value.Bytes) != value.MaxPart || !e.Value.Cut() {
					t.Fatalf("huge value: len %d, kept %d", e.Value.Len, len(e.Value.Bytes))
				}
			case "bad\xff":
				if e.Value.Bytes != "v\xfe" {
					t.Fatalf("invalid UTF-8 value: %q", e.Value.Bytes)
				}
			}
		}
		if pg.Next == "" {
			break
		}
		at = pg.Next
	}
	if len(seen) != 252 || pages < 2 {
		t.Fatalf("%d fields in %d pages", len(seen), pages)
	}
}

// A filter matches itself: glob characters in it are not a pattern.
func TestFilterIsGlobEscaped(t *testing.T) {
	c, db := open(t)
	ctx := context.Background()
	db.HSet(ctx, "h", "a*b", 1, "axxb", 2, "[x]", 3, "x", 4, `back\slash`, 5)
	db.SAdd(ctx, "s", "a?c", "abc", "x-y", "xzy")
	for _, tc := range []struct{ key, filter, want string }{
		{"h", "a*b", "a*b"}, {"h", "[x]", "[x]"}, {"h", `\`, `back\slash`},
		{"s", "a?c", "a?c"}, {"s", "x-y", "x-y"},
	} {
		pg := read(t, c, tc.key, value.Request{Filter: tc.filter})
		var got []string
		for _, e := range pg.Elements {
			got = append(got, e.Name.Bytes)
		}
		if len(got) != 1 || got[0] != tc.want {
			t.Errorf("%s filtered by %q: %q, want %q", tc.key, tc.filter, got, tc.want)
		}
	}
}

// Set pages scan the members; lists and sorted sets are windows with
// previous and next offsets; a stream pages by entry ID.
func TestSetListZsetStreamPaging(t *testing.T) {
	c, db := open(t)
	ctx := context.Background()
	for i := range 250 {
		db.SAdd(ctx, "s", fmt.Sprintf("m%d", i))
		db.RPush(ctx, "l", fmt.Sprintf("e%d", i))
		db.ZAdd(ctx, "z", redis.Z{Score: float64(i) / 2, Member: fmt.Sprintf("p%03d", i)})
		db.XAdd(ctx, &redis.XAddArgs{Stream: "x", ID: fmt.Sprintf("%d-1", i+1), Values: []string{"n", fmt.Sprint(i), "a", "b"}})
	}
	seen := map[string]bool{}
	for at := ""; ; {
		pg := read(t, c, "s", value.Request{At: at})
		for _, e := range pg.Elements {
			seen[e.Name.Bytes] = true
		}
		if at = pg.Next; at == "" {
			break
		}
	}
	if len(seen) != 250 {
		t.Fatalf("set: %d members seen", len(seen))
	}
	mid := read(t, c, "l", value.Request{At: "100"})
	if mid.Length != 250 || len(mid.Elements) != 100 || mid.Elements[0].Value.Bytes != "e100" || mid.Elements[0].Index != 100 || mid.Next != "200" || mid.Prev != "0" {
		t.Fatalf("list middle: %+v", mid.Elements[0])
	}
	end := read(t, c, "l", value.Request{At: "200"})
	if len(end.Elements) != 50 || end.Next != "" || end.Prev != "100" {
		t.Fatalf("list end: %d elements, next %q prev %q", len(end.Elements), end.Next, end.Prev)
	}
	z := read(t, c, "z", value.Request{})
	if z.Length != 250 || z.Elements[3].Name.Bytes != "p003" || z.Elements[3].Score != 1.5 || z.Next != "100" || z.Prev != "" {
		t.Fatalf("zset start: %+v next %q", z.Elements[3], z.Next)
	}
	var ids []string
	for at := ""; ; {
		pg := read(t, c, "x", value.Request{At: at})
		for _, e := range pg.Elements {
			ids = append(ids, e.Name.Bytes)
			// Fields in the order the entry was written.
			if len(e.Fields) != 4 || e.Fields[0].Bytes != "n" || e.Fields[2].Bytes != "a" || e.FieldCount != 2 {
				t.Fatalf("stream entry fields %+v", e.Fields)
			}
		}
		if at = pg.Next; at == "" {
			break
		}
	}
	if len(ids) != 250 || ids[0] != "1-1" || ids[249] != "250-1" {
		t.Fatalf("stream: %d entries, %q…%q", len(ids), ids[0], ids[len(ids)-1])
	}
	for key, at := range map[string]string{"l": "-1", "z": "x", "s": "1x", "x": "1-x"} {
		if _, err := value.Read(ctx, c, 0, key, value.Request{At: at}); err == nil {
			t.Errorf("%s at %q: no error", key, at)
		}
	}
}

// A key of a sensitive family is never read: no value, no length.
func TestSensitiveKeyReturnsNothing(t *testing.T) {
	c, db := open(t)
	ctx := context.Background()
	pack, err := schema.Load("secret.yaml", []byte(`name: secret
families:
  - id: totp
    db: 0
    pattern: "totp:{user}"
    type: string
    ttl: none
    domain: Auth
    role: cache
    sensitive: true
`))
	if err != nil {
		t.Fatal(err)
	}
	c.ForcePack(pack)
	db.Set(ctx, "totp:ada", "JBSWY3DPEHPK3PXP", 0)
	pg := read(t, c, "totp:ada", value.Request{Type: "string"})
	if !pg.Withheld || pg.String != "" || pg.Length != 0 || pg.Elements != nil {
		t.Fatalf("sensitive key read: %+v", pg)
	}
}
