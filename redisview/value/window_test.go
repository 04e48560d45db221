package value_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/demo"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/value"
)

// testDB is free in the demo's eIsland layout, and used alike on a real
// server.
const testDB = 15

type backend struct {
	name string
	conn *redisview.Conn
	w    *redis.Client // writes the fixtures
	real bool
}

// backends runs f against a real redis-server and the embedded demo.
func backends(t *testing.T, f func(t *testing.T, b backend)) {
	t.Run("redis", func(t *testing.T) {
		rs := redistest.Start(t)
		f(t, backend{name: "redis", conn: openURL(t, rs.URL(0)), w: rs.Client(testDB), real: true})
	})
	t.Run("demo", func(t *testing.T) {
		d, err := demo.Start(context.Background(), slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(d.Close)
		url := d.Connections()[0].URL
		w := redis.NewClient(&redis.Options{Addr: strings.TrimPrefix(url, "redis://"), DB: testDB, DisableIdentity: true})
		t.Cleanup(func() { w.Close() })
		f(t, backend{name: "demo", conn: openURL(t, url), w: w})
	})
}

func openURL(t *testing.T, url string) *redisview.Conn {
	t.Helper()
	c, err := redisview.Open(redisview.ConnConfig{Name: "t", URL: url}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func (b backend) read(t *testing.T, key string, req value.Request) value.Page {
	t.Helper()
	pg, err := value.Read(context.Background(), b.conn, testDB, key, req)
	if err != nil {
		t.Fatalf("%s %+v: %v", key, req, err)
	}
	if pg.Type != "string" && pg.Type != "none" && pg.Path != "lua" {
		t.Fatalf("%s read by %q, not the script (%s)", key, pg.Path, b.conn.Scripts().Why())
	}
	return pg
}

func names(pg value.Page) []string {
	var out []string
	for _, e := range pg.Elements {
		out = append(out, e.Name.Bytes)
	}
	return out
}

// Every type pages at its start, middle and end with one script per page;
// each shows its length, and its encoding where the server tells it.
func TestWindowsStartMiddleEnd(t *testing.T) {
	backends(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		for i := range 250 {
			b.w.RPush(ctx, "l", fmt.Sprintf("e%03d", i))
			b.w.ZAdd(ctx, "z", redis.Z{Score: float64(i), Member: fmt.Sprintf("p%03d", i)})
			b.w.HSet(ctx, "h", fmt.Sprintf("f%03d", i), strings.Repeat("v", 70)+strconv.Itoa(i)) // over the listpack thresholds
			b.w.SAdd(ctx, "s", fmt.Sprintf("m%03d", i))
		}
		for _, k := range []string{"l", "z"} {
			start, mid, end := b.read(t, k, value.Request{}), b.read(t, k, value.Request{At: "100"}), b.read(t, k, value.Request{At: "200"})
			if start.Length != 250 || len(start.Elements) != 100 || start.Prev != "" || start.Next != "100" || start.Last != "200" {
				t.Errorf("%s start: %d elements, prev %q next %q last %q", k, len(start.Elements), start.Prev, start.Next, start.Last)
			}
			if len(mid.Elements) != 100 || mid.Elements[0].Index != 100 || mid.Prev != "0" || mid.Next != "200" {
				t.Errorf("%s middle: first %+v prev %q next %q", k, mid.Elements[0], mid.Prev, mid.Next)
			}
			if len(end.Elements) != 50 || end.Elements[49].Index != 249 || end.Next != "" || end.Prev != "100" || end.Last != "" {
				t.Errorf("%s end: %d elements, next %q last %q", k, len(end.Elements), end.Next, end.Last)
			}
			if k == "z" && (mid.Elements[0].Name.Bytes != "p100" || mid.Elements[0].Score != 100) {
				t.Errorf("zset middle: %+v", mid.Elements[0])
			}
			if k == "l" && end.Elements[49].Value.Bytes != "e249" {
				t.Errorf("list end: %+v", end.Elements[49])
			}
			if past := b.read(t, k, value.Request{At: "1000"}); len(past.Elements) != 0 || past.Next != "" {
				t.Errorf("%s past the end: %+v", k, past)
			}
		}
		for _, k := range []string{"h", "s"} {
			seen, pages := map[string]bool{}, 0
			for at := ""; ; pages++ {
				pg := b.read(t, k, value.Request{At: at})
				for _, e := range pg.Elements {
					seen[e.Name.Bytes] = true
					if k == "h" && !strings.HasSuffix(e.Value.Bytes, "v"+strings.TrimLeft(e.Name.Bytes[1:], "0")) && e.Name.Bytes != "f000" {
						t.Fatalf("hash %q = %q", e.Name.Bytes, e.Value.Bytes)
					}
				}
				if at = pg.Next; at == "" {
					break
				}
			}
			if len(seen) != 250 || (b.real && pages < 2) {
				t.Errorf("%s: %d seen in %d pages", k, len(seen), pages+1)
			}
		}
		// Redis 7.2+ (and the demo, which follows 8.x) keeps a list this
		// small as a listpack; 7.0 has no listpack lists.
		wantEnc := map[string][]string{"l": {"quicklist", "listpack"}, "z": {"skiplist"}, "h": {"hashtable"}, "s": {"hashtable"}}
		if !b.real {
			wantEnc["l"] = []string{"listpack"}
		}
		for k, want := range wantEnc {
			if pg := b.read(t, k, value.Request{}); !slices.Contains(want, pg.Encoding) {
				t.Errorf("%s encoding %q, want %q", k, pg.Encoding, want)
			}
		}
		b.w.ZAdd(ctx, "small", redis.Z{Score: 1, Member: "a"})
		b.w.SAdd(ctx, "ints", 1, 2, 3)
		b.w.Set(ctx, "n", "12345", 0)
		b.w.Set(ctx, "long", strings.Repeat("x", 45), 0)
		for k, want := range map[string]string{"small": "listpack", "ints": "intset", "n": "int", "long": "raw"} {
			if pg := b.read(t, k, value.Request{}); pg.Encoding != want {
				t.Errorf("%s encoding %q, want %q", k, pg.Encoding, want)
			}
		}
	})
}

// A score window reads by rank from its first member: numbers, -inf/+inf
// and exclusive bounds, paged inside the window; malformed bounds are the
// request's fault.
func TestScoreWindow(t *testing.T) {
	backends(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		for i := range 1000 {
			b.w.ZAdd(ctx, "z", redis.Z{Score: float64(i) / 2, Member: fmt.Sprintf("p%04d", i)})
		}
		pg := b.read(t, "z", value.Request{Min: "10", Max: "(200"}) // scores 10 … 199.5: ranks 20 … 399
		if !pg.ByScore || pg.InWindow != 380 || pg.FirstRank != 20 || len(pg.Elements) != 100 || pg.Elements[0].Index != 20 ||
			pg.Elements[0].Score != 10 || pg.Next != "100" || pg.Last != "300" || pg.Length != 1000 {
			t.Fatalf("window start: in %d first rank %d, %d elements, next %q last %q", pg.InWindow, pg.FirstRank, len(pg.Elements), pg.Next, pg.Last)
		}
		mid := b.read(t, "z", value.Request{Min: "10", Max: "(200", At: "100"})
		if mid.Elements[0].Name.Bytes != "p0120" || mid.Prev != "0" || mid.Next != "200" {
			t.Fatalf("window middle: %+v prev %q next %q", mid.Elements[0], mid.Prev, mid.Next)
		}
		end := b.read(t, "z", value.Request{Min: "10", Max: "(200", At: "300"})
		if len(end.Elements) != 80 || end.Elements[79].Score != 199.5 || end.Next != "" {
			t.Fatalf("window end: %d elements, last %+v", len(end.Elements), end.Elements[len(end.Elements)-1])
		}
		ex := b.read(t, "z", value.Request{Min: "(10", Max: "10.5"})
		if got := names(ex); len(got) != 1 || got[0] != "p0021" {
			t.Fatalf("(10 … 10.5: %q", got)
		}
		inf := b.read(t, "z", value.Request{Min: "-inf", Max: "+inf"})
		if inf.InWindow != 1000 || inf.FirstRank != 0 {
			t.Fatalf("-inf … +inf: %d from %d", inf.InWindow, inf.FirstRank)
		}
		open := b.read(t, "z", value.Request{Min: "499"}) // max defaults to +inf
		if open.InWindow != 2 || open.Max != "+inf" {
			t.Fatalf("499 … : %+v", open)
		}
		empty := b.read(t, "z", value.Request{Min: "1000", Max: "2000"})
		if empty.InWindow != 0 || len(empty.Elements) != 0 || empty.FirstRank != -1 {
			t.Fatalf("empty window: %+v", empty)
		}
		for _, req := range []value.Request{{Min: "x"}, {Max: "1e"}, {Min: "nan"}, {Min: "5", Max: "4"}, {Min: "((1"}, {Min: "1", At: "-1"}, {Min: "0x10"}} {
			if _, err := value.Read(ctx, b.conn, testDB, "z", req); !errors.Is(err, value.ErrCursor) {
				t.Errorf("%+v: %v, want ErrCursor", req, err)
			}
		}
		b.w.Set(ctx, "str", "x", 0)
		if _, err := value.Read(ctx, b.conn, testDB, "str", value.Request{Min: "1"}); !errors.Is(err, value.ErrCursor) {
			t.Errorf("score window on a string: %v", err)
		}
	})
}

// A member lookup gives the exact member's score, rank and rank page, or
// says it is not there.
func TestMemberLookup(t *testing.T) {
	backends(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		for i := range 350 {
			b.w.ZAdd(ctx, "z", redis.Z{Score: float64(i) * 1.5, Member: fmt.Sprintf("p%03d", i)})
		}
		b.w.ZAdd(ctx, "z", redis.Z{Score: 9999, Member: "bin\xff*"})
		m, err := value.Lookup(ctx, b.conn, testDB, "z", "p234")
		if err != nil || !m.Found || m.Rank != 234 || m.Score != 351 || m.At != "200" {
			t.Fatalf("p234: %+v %v", m, err)
		}
		if pg := b.read(t, "z", value.Request{At: m.At}); pg.Elements[34].Name.Bytes != "p234" {
			t.Fatalf("its page holds %q at 34", pg.Elements[34].Name.Bytes)
		}
		if m, err := value.Lookup(ctx, b.conn, testDB, "z", "bin\xff*"); err != nil || !m.Found || m.Rank != 350 {
			t.Fatalf("binary member: %+v %v", m, err)
		}
		for _, missing := range []string{"p2340", "p*", ""} {
			if m, err := value.Lookup(ctx, b.conn, testDB, "z", missing); err != nil || m.Found {
				t.Fatalf("%q: %+v %v", missing, m, err)
			}
		}
	})
}

// A stream pages oldest first and newest first, forwards and back.
func TestStreamBothWays(t *testing.T) {
	backends(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		for i := 1; i <= 250; i++ {
			b.w.XAdd(ctx, &redis.XAddArgs{Stream: "x", ID: fmt.Sprintf("%d-0", i), Values: []string{"n", strconv.Itoa(i)}})
		}
		first := b.read(t, "x", value.Request{Desc: true})
		if n := names(first); first.Length != 250 || len(n) != 100 || n[0] != "250-0" || n[99] != "151-0" || first.Next != "(151-0" || first.Prev != "" {
			t.Fatalf("newest first: %d, %q…, next %q prev %q", len(n), n[0], first.Next, first.Prev)
		}
		second := b.read(t, "x", value.Request{Desc: true, At: first.Next})
		if n := names(second); n[0] != "150-0" || n[99] != "51-0" || second.Prev != "250-0" {
			t.Fatalf("newest first, page 2: %q…%q prev %q", n[0], n[99], second.Prev)
		}
		third := b.read(t, "x", value.Request{Desc: true, At: second.Next})
		if n := names(third); len(n) != 50 || n[49] != "1-0" || third.Next != "" || third.Prev != "150-0" {
			t.Fatalf("newest first, end: %d, next %q prev %q", len(n), third.Next, third.Prev)
		}
		back := b.read(t, "x", value.Request{Desc: true, At: third.Prev})
		if n := names(back); n[0] != "150-0" {
			t.Fatalf("back from the end: %q", n[0])
		}
		mid := b.read(t, "x", value.Request{At: "120"}) // a bare ms jumps to it
		if n := names(mid); n[0] != "120-0" || mid.Prev != "20-0" || mid.Next != "(219-0" {
			t.Fatalf("oldest first from 120: %q prev %q next %q", n[0], mid.Prev, mid.Next)
		}
		if pg := b.read(t, "x", value.Request{At: mid.Prev}); names(pg)[0] != "20-0" || pg.Prev != "1-0" {
			t.Fatalf("previous: %q prev %q", names(pg)[0], pg.Prev)
		}
		for _, req := range []value.Request{{At: "1-x"}, {At: "-5"}, {At: "((1"}, {Desc: true, At: "a"}} {
			if _, err := value.Read(ctx, b.conn, testDB, "x", req); !errors.Is(err, value.ErrCursor) {
				t.Errorf("%+v: %v", req, err)
			}
		}
		b.w.RPush(ctx, "l", "a")
		if _, err := value.Read(ctx, b.conn, testDB, "l", value.Request{Desc: true}); !errors.Is(err, value.ErrCursor) {
			t.Errorf("newest first on a list: %v", err)
		}
	})
}

// netOut is the server's total_net_output_bytes.
func netOut(t *testing.T, c *redis.Client) int64 {
	t.Helper()
	info, err := c.Info(context.Background(), "stats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(l, "total_net_output_bytes:"); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	t.Fatal("no total_net_output_bytes")
	return 0
}

// A 1 MB element of any type is cut inside Redis: the page says its full
// length, and what crossed the wire for the whole page is a few KiB (on a
// real server, total_net_output_bytes; on the demo, which does not count
// it, the parts themselves: the script path never cuts on arrival, so a
// part of MaxPart bytes is what the reply carried).
func TestHugeElementsCutInsideRedis(t *testing.T) {
	backends(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		huge := strings.Repeat("H", 1<<20)
		b.w.HSet(ctx, "h", "f", huge, huge, "v")
		b.w.SAdd(ctx, "s", huge, "small")
		b.w.RPush(ctx, "l", "a", huge)
		b.w.ZAdd(ctx, "z", redis.Z{Score: 1, Member: huge}, redis.Z{Score: 2, Member: "b"})
		b.w.XAdd(ctx, &redis.XAddArgs{Stream: "x", ID: "1-0", Values: []string{"big", huge}})
		for _, k := range []string{"h", "s", "l", "z", "x"} {
			before := int64(0)
			if b.real {
				before = netOut(t, b.w)
			}
			pg := b.read(t, k, value.Request{})
			var parts []value.Part
			for _, e := range pg.Elements {
				parts = append(parts, e.Name, e.Value)
				parts = append(parts, e.Fields...)
			}
			cut := 0
			for _, p := range parts {
				if p.Len == 1<<20 {
					cut++
					if len(p.Bytes) != value.MaxPart || !p.Cut() || p.Bytes != huge[:value.MaxPart] {
						t.Errorf("%s: a 1 MB part kept %d bytes", k, len(p.Bytes))
					}
				}
			}
			if want := map[string]int{"h": 2}[k]; cut != max(want, 1) {
				t.Errorf("%s: %d parts of 1 MB, want %d", k, cut, max(want, 1))
			}
			if b.real {
				// The page's reply, plus this test's INFO reply (~2 KiB).
				if sent := netOut(t, b.w) - before; sent > 16<<10 {
					t.Errorf("%s: %d bytes left the server for one page", k, sent)
				}
			}
		}
	})
}

// A server whose ACL forbids scripts is read with plain commands: pages
// still work and cut their elements, a collection that might hold huge
// elements is refused rather than pulled whole, and the connection
// remembers why scripts are not used.
func TestScriptsRefusedFallBack(t *testing.T) {
	rs := redistest.Start(t)
	ctx := context.Background()
	admin := rs.Client(0)
	if err := admin.Do(ctx, "ACL", "SETUSER", "noscript", "on", ">pw", "~*", "+@all", "-@scripting").Err(); err != nil {
		t.Fatal(err)
	}
	c := openURL(t, "redis://noscript:pw@"+rs.Addr+"/0")
	w := rs.Client(testDB)
	for i := range 250 {
		w.ZAdd(ctx, "z", redis.Z{Score: float64(i), Member: fmt.Sprintf("p%03d", i)})
	}
	w.HSet(ctx, "h", "f", strings.Repeat("v", 2000))
	w.RPush(ctx, "big", strings.Repeat("B", 9<<20))
	w.XAdd(ctx, &redis.XAddArgs{Stream: "x", ID: "1-0", Values: []string{"a", "1"}})
	w.XAdd(ctx, &redis.XAddArgs{Stream: "x", ID: "2-0", Values: []string{"a", "2"}})
	pg, err := value.Read(ctx, c, testDB, "z", value.Request{Min: "(100", Max: "200", At: "50"})
	if err != nil || pg.Path != "commands" || pg.InWindow != 100 || pg.FirstRank != 101 || pg.Elements[0].Name.Bytes != "p151" || pg.Encoding != "skiplist" {
		t.Fatalf("score window without scripts: %+v %v", pg, err)
	}
	if !strings.Contains(c.Scripts().Why(), "EVAL") {
		t.Errorf("why scripts are off: %q", c.Scripts().Why())
	}
	if pg, err := value.Read(ctx, c, testDB, "h", value.Request{}); err != nil || pg.Elements[0].Value.Len != 2000 || len(pg.Elements[0].Value.Bytes) != value.MaxPart {
		t.Fatalf("hash without scripts: %+v %v", pg, err)
	}
	if pg, err := value.Read(ctx, c, testDB, "x", value.Request{Desc: true}); err != nil || names(pg)[0] != "2-0" {
		t.Fatalf("stream newest first without scripts: %+v %v", pg, err)
	}
	if _, err := value.Read(ctx, c, testDB, "big", value.Request{}); !errors.Is(err, value.ErrTooLarge) {
		t.Fatalf("a 9 MB element without scripts: %v, want ErrTooLarge", err)
	}
}

// A string reads in 64 KiB windows from a byte offset; an offset past the
// end reads nothing; a malformed one is the request's fault.
func TestStringWindows(t *testing.T) {
	backends(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		var sb strings.Builder
		for i := 0; sb.Len() < 150_000; i++ {
			fmt.Fprintf(&sb, "%07d,", i)
		}
		s := sb.String()
		b.w.Set(ctx, "s", s, 0)
		for _, at := range []int{0, 70_000, len(s) - 10} {
			pg := b.read(t, "s", value.Request{At: strconv.Itoa(at)})
			want := s[at:min(at+value.MaxString, len(s))]
			if pg.Offset != int64(at) || pg.Length != int64(len(s)) || pg.String != want {
				t.Fatalf("at %d: offset %d length %d, %d bytes read", at, pg.Offset, pg.Length, len(pg.String))
			}
		}
		if pg := b.read(t, "s", value.Request{At: "999999"}); pg.String != "" {
			t.Fatalf("past the end: %q", pg.String)
		}
		for _, at := range []string{"-1", "x", "01"} {
			if _, err := value.Read(ctx, b.conn, testDB, "s", value.Request{At: at}); !errors.Is(err, value.ErrCursor) {
				t.Errorf("at %q: %v", at, err)
			}
		}
	})
}
