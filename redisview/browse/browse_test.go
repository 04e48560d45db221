package browse_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/browse"
	"github.com/keydeck/keydeck/redisview/schema"
)

const testPack = `
name: browsetest
families:
  - id: bucket
    db: 0
    pattern: "rl:bucket:{user}"
    type: hash
    ttl: any
    domain: Limits
    role: cache
  - id: vip-bucket
    db: 0
    pattern: "rl:bucket:vip:{user}"
    type: hash
    ttl: any
    domain: Limits
    role: cache
  - id: session
    db: 0
    pattern: "{user}:session:{id:digits}"
    type: string
    ttl: any
    domain: Sessions
    role: cache
  - id: token
    db: 0
    pattern: "tok:{acct:base64}"
    type: string
    ttl: any
    domain: Sessions
    role: cache
`

type fixture struct {
	srv  *redistest.Server
	conn *redisview.Conn
	cls  *schema.Classifier
	pack *schema.Pack
}

func setup(t *testing.T) fixture {
	t.Helper()
	srv := redistest.Start(t)
	conn, err := redisview.Open(redisview.ConnConfig{Name: "t", URL: srv.URL(0)}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	p, err := schema.Load("browsetest", []byte(strings.TrimLeft(testPack, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	return fixture{srv: srv, conn: conn, cls: p.Classifier(), pack: p}
}

// walkAll pages through a list until its end, checking each page's bounds.
func walkAll(t *testing.T, f fixture, req browse.Request) (names []string, pages []browse.Page) {
	t.Helper()
	ctx := context.Background()
	for i := 0; ; i++ {
		if i > 10000 {
			t.Fatal("the walk never ended")
		}
		pg, err := browse.List(ctx, f.conn, 0, req)
		if err != nil {
			t.Fatal(err)
		}
		if req.PageKeys > 0 && len(pg.Keys) > req.PageKeys {
			t.Fatalf("page of %d keys, limit %d", len(pg.Keys), req.PageKeys)
		}
		if req.MaxScans > 0 && pg.Scans > req.MaxScans {
			t.Fatalf("page made %d SCAN calls, budget %d", pg.Scans, req.MaxScans)
		}
		if pg.Skipped != req.At.Skip {
			t.Fatalf("page at %+v skipped %d keys", req.At, pg.Skipped)
		}
		pages = append(pages, pg)
		for _, k := range pg.Keys {
			names = append(names, k.Name)
		}
		if pg.End {
			return names, pages
		}
		// The cursor goes through the URL.
		at, err := browse.ParseCursor(pg.Next.String())
		if err != nil || at != pg.Next {
			t.Fatalf("cursor %+v does not survive ?at=%q: %+v, %v", pg.Next, pg.Next.String(), at, err)
		}
		req.At = at
	}
}

func scanCalls(t *testing.T, f fixture) (scan, keys int64) {
	t.Helper()
	calls, err := f.srv.CommandCalls(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return calls["scan"], calls["keys"]
}

// A family's keys, spread thinly over many SCAN pages among thousands of
// others, are each listed exactly once, with nothing of another family
// (a more specific pattern on the same prefix) and within every budget.
func TestFamilyPagesReachEveryKeyOnce(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	c := f.srv.Client(0)
	var want []string
	p := c.Pipeline()
	for i := range 3000 {
		p.Set(ctx, fmt.Sprintf("fill:%d", i), "x", 0)
	}
	for i := range 400 {
		k := fmt.Sprintf("rl:bucket:u%d", i)
		want = append(want, k)
		p.HSet(ctx, k, "tokens", i, "ts", 1)
		if i%3 == 0 {
			p.Expire(ctx, k, time.Hour)
		}
	}
	for i := range 60 {
		p.HSet(ctx, fmt.Sprintf("rl:bucket:vip:u%d", i), "tokens", 1)
	}
	// Same prefix, other type: TYPE keeps them out of the walk.
	p.Set(ctx, "rl:bucket:stringy", "1", 0)
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	slices.Sort(want)
	for _, tc := range []struct {
		name                   string
		pageKeys, scans, count int
		wantBudget             bool
	}{
		{"thin scans hit the budget", 25, 4, 20, true},
		{"a scan reply bigger than a page", 30, 20, 5000, false},
		{"defaults", 0, 0, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			scan0, keys0 := scanCalls(t, f)
			req := browse.Request{Family: f.pack.Family("bucket"), Classifier: f.cls, PageKeys: tc.pageKeys, MaxScans: tc.scans, Count: tc.count}
			got, pages := walkAll(t, f, req)
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Fatalf("listed %d keys, want the %d of the family exactly once", len(got), len(want))
			}
			var scans int64
			budget := false
			for _, pg := range pages {
				scans += int64(pg.Scans)
				budget = budget || pg.Budget
				if pg.Walk.Match != "rl:bucket:*" || pg.Walk.Type != "hash" || pg.Walk.WholeDB {
					t.Fatalf("walk %+v", pg.Walk)
				}
				for _, k := range pg.Keys {
					var n int
					fmt.Sscanf(k.Name, "rl:bucket:u%d", &n)
					if k.Type != "hash" || k.Size != 2 {
						t.Fatalf("%s: type %q size %d, want hash of 2 fields", k.Name, k.Type, k.Size)
					}
					if (n%3 == 0) != (k.TTL > 0) || (n%3 != 0 && k.TTL != -1) {
						t.Fatalf("%s: TTL %v", k.Name, k.TTL)
					}
					if v, _ := k.Match.Get("user"); v != fmt.Sprintf("u%d", n) {
						t.Fatalf("%s: user %q", k.Name, v)
					}
				}
			}
			if budget != tc.wantBudget {
				t.Fatalf("some page stopped on its budget: %v, want %v", budget, tc.wantBudget)
			}
			scan1, keys1 := scanCalls(t, f)
			if scan1-scan0 != scans {
				t.Fatalf("INFO commandstats counts %d SCAN calls, the pages say %d", scan1-scan0, scans)
			}
			if keys1 != keys0 || keys1 != 0 {
				t.Fatalf("KEYS was called (%d)", keys1)
			}
		})
	}
}

// A family whose pattern starts with a placeholder has no prefix: the walk
// MATCHes its longest literal anywhere and says it reads the whole
// database.
func TestFamilyWithoutLiteralPrefix(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	c := f.srv.Client(0)
	want := []string{"alice:session:1", "bob:ops:session:22", "x:session:333"}
	for _, k := range want {
		c.Set(ctx, k, "v", 0)
	}
	for _, k := range []string{"alice:session:abc", "session:1", "other:1", "alice:sessions:1"} {
		c.Set(ctx, k, "v", 0)
	}
	got, pages := walkAll(t, f, browse.Request{Family: f.pack.Family("session"), Classifier: f.cls, PageKeys: 2, Count: 2})
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("listed %q, want %q", got, want)
	}
	if w := pages[0].Walk; w.Match != "*:session:*" || !w.WholeDB || w.Type != "string" {
		t.Fatalf("walk %+v", w)
	}
}

// Base64 placeholders come back decoded when they are UTF-8 text.
func TestDecodedPlaceholders(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	k := "tok:" + "Ym9iQGV4YW1wbGUub3Jn" // bob@example.org
	f.srv.Client(0).Set(ctx, k, "v", 0)
	pg, err := browse.List(ctx, f.conn, 0, browse.Request{Family: f.pack.Family("token"), Classifier: f.cls})
	if err != nil {
		t.Fatal(err)
	}
	if len(pg.Keys) != 1 || !pg.End {
		t.Fatalf("page %+v", pg)
	}
	v := pg.Keys[0].Match.Vars[0]
	if v.Value != "bob@example.org" || !v.Decoded || v.Raw != "Ym9iQGV4YW1wbGUub3Jn" {
		t.Fatalf("var %+v", v)
	}
}

// A prefix list holds only keys no family matches, starting with the
// prefix byte for byte (glob characters in it are literal).
func TestPrefixListExcludesClassifiedKeys(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	c := f.srv.Client(0)
	c.HSet(ctx, "rl:bucket:u1", "tokens", 1)
	c.Set(ctx, "rl:bucket:stringy", "1", 0) // a violation, but classified
	c.Set(ctx, "rl:other:1", "abc", 0)
	c.RPush(ctx, "rl:queue", "a", "b", "c")
	c.Set(ctx, "x:session:1", "1", 0)
	c.Set(ctx, "we*ird[1]:a", "1", 0)
	c.Set(ctx, "weXXird1]:a", "1", 0)
	c.Set(ctx, "we*ird[1]:b\xff", "1", 0)
	for _, tc := range []struct {
		prefix string
		want   []string
	}{
		{"rl:", []string{"rl:other:1", "rl:queue"}},
		{"we*ird[1]:", []string{"we*ird[1]:a", "we*ird[1]:b\xff"}},
		{"", []string{"rl:other:1", "rl:queue", "we*ird[1]:a", "we*ird[1]:b\xff", "weXXird1]:a"}},
		{"nothing:", nil},
	} {
		got, pages := walkAll(t, f, browse.Request{Prefix: tc.prefix, Classifier: f.cls, PageKeys: 1, Count: 3})
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("prefix %q: listed %q, want %q", tc.prefix, got, tc.want)
		}
		if pages[0].Walk.Type != "" || pages[0].Walk.WholeDB != (tc.prefix == "") {
			t.Errorf("prefix %q: walk %+v", tc.prefix, pages[0].Walk)
		}
		for _, pg := range pages {
			for _, k := range pg.Keys {
				if k.Name == "rl:queue" && (k.Type != "list" || k.Size != 3) {
					t.Errorf("rl:queue read as %+v", k.Info)
				}
				if k.Name == "rl:other:1" && (k.Type != "string" || k.Size != 3) {
					t.Errorf("rl:other:1 read as %+v", k.Info)
				}
			}
		}
	}
}

// A walk that finds nothing stops after its budget of SCAN calls, says so,
// and the next page continues where it stopped.
func TestBudgetRespected(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	c := f.srv.Client(0)
	p := c.Pipeline()
	for i := range 2000 {
		p.Set(ctx, fmt.Sprintf("fill:%d", i), "x", 0)
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	scan0, _ := scanCalls(t, f)
	pg, err := browse.List(ctx, f.conn, 0, browse.Request{Family: f.pack.Family("bucket"), Classifier: f.cls, MaxScans: 3, Count: 10})
	if err != nil {
		t.Fatal(err)
	}
	scan1, keys := scanCalls(t, f)
	if !pg.Budget || pg.End || pg.Scans != 3 || scan1-scan0 != 3 || len(pg.Keys) != 0 || pg.Next.Scan.Done() {
		t.Fatalf("page %+v after %d SCAN calls", pg, scan1-scan0)
	}
	if keys != 0 {
		t.Fatalf("KEYS called %d times", keys)
	}
}

// Read, as the live list calls it: a key that vanished is gone; another
// type than the family's is still sized.
func TestReadGoneAndOtherType(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	c := f.srv.Client(0)
	c.HSet(ctx, "rl:bucket:a", "tokens", 1, "ts", 2, "x", 3)
	c.SAdd(ctx, "rl:bucket:b", "m1", "m2")
	infos, err := browse.Read(ctx, f.conn, 0, []string{"rl:bucket:a", "rl:bucket:b", "rl:bucket:gone"}, "hash")
	if err != nil {
		t.Fatal(err)
	}
	want := []browse.Info{{Type: "hash", TTL: -1, Size: 3}, {Type: "set", TTL: -1, Size: 2}, {Type: "", TTL: -1, Size: -1}}
	if !slices.Equal(infos, want) {
		t.Fatalf("read %+v, want %+v", infos, want)
	}
}

func TestParseCursor(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want browse.Cursor
		bad  bool
	}{
		{"", browse.Cursor{}, false},
		{"123", browse.Cursor{Scan: "123"}, false},
		{"123.4", browse.Cursor{Scan: "123", Skip: 4}, false},
		{"0.7", browse.Cursor{Skip: 7}, false},
		{"18446744073709551615", browse.Cursor{Scan: "18446744073709551615"}, false},
		{"x", browse.Cursor{}, true},
		{"1.0", browse.Cursor{}, true},
		{"1.-2", browse.Cursor{}, true},
		{"-1", browse.Cursor{}, true},
		{"1.2.3", browse.Cursor{}, true},
	} {
		got, err := browse.ParseCursor(tc.in)
		if tc.bad {
			if !errors.Is(err, browse.ErrCursor) {
				t.Errorf("%q: %+v, %v; want ErrCursor", tc.in, got, err)
			}
			continue
		}
		if err != nil || got != tc.want || got.String() != tc.in {
			t.Errorf("%q: %+v (%q), %v", tc.in, got, got.String(), err)
		}
	}
}
