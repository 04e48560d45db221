package value_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview/value"
)

// bigCompact is 3,000 elements: with the compact-encoding thresholds
// raised to 5000, real Redis answers one HSCAN/SSCAN of such a key with
// every element whatever COUNT asks; the demo ignores COUNT always.
const bigCompact = 3000

func raiseCompactLimits(t *testing.T, w *redis.Client) {
	t.Helper()
	ctx := context.Background()
	for _, p := range []string{"hash-max-listpack-entries", "zset-max-listpack-entries", "set-max-intset-entries"} {
		if err := w.ConfigSet(ctx, p, "5000").Err(); err != nil {
			t.Fatalf("CONFIG SET %s: %v", p, err)
		}
	}
	// set-max-listpack-entries is Redis 7.2's: an older server keeps
	// integer sets as an intset, which SSCAN returns whole alike.
	_ = w.ConfigSet(ctx, "set-max-listpack-entries", "5000").Err()
}

func fillCompact(t *testing.T, w *redis.Client) {
	t.Helper()
	ctx := context.Background()
	p := w.Pipeline()
	for i := range bigCompact {
		p.HSet(ctx, "capped:hash", fmt.Sprintf("f%04d", i), i)
		p.SAdd(ctx, "capped:set", strconv.Itoa(i))
		p.ZAdd(ctx, "capped:zset", redis.Z{Score: float64(i), Member: fmt.Sprintf("m%04d", i)})
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
}

// walk follows a key's pages from the start and returns every name shown,
// failing when a page holds more than PageSize elements.
func walk(t *testing.T, read func(value.Request) value.Page, key string) (names []string, capped bool) {
	t.Helper()
	at := ""
	for pages := 0; ; pages++ {
		if pages > 2*bigCompact/value.PageSize {
			t.Fatalf("%s: no end after %d pages", key, pages)
		}
		pg := read(value.Request{At: at})
		if len(pg.Elements) > value.PageSize {
			t.Fatalf("%s at %q: %d elements on one page (at most %d)", key, at, len(pg.Elements), value.PageSize)
		}
		capped = capped || pg.Capped
		for _, e := range pg.Elements {
			names = append(names, e.Name.Bytes)
		}
		if pg.Next == "" {
			return names, capped
		}
		at = pg.Next
	}
}

func checkOnce(t *testing.T, key string, names []string) {
	t.Helper()
	seen := map[string]int{}
	for _, n := range names {
		seen[n]++
	}
	if len(seen) != bigCompact {
		t.Errorf("%s: %d distinct elements reached, want %d", key, len(seen), bigCompact)
	}
	for n, k := range seen {
		if k != 1 {
			t.Errorf("%s: %q shown %d times", key, n, k)
		}
	}
}

// A scan reply larger than COUNT (a listpack or intset key comes whole)
// is cut to a page, and the next pages resume inside that reply until
// every element was shown exactly once.
func TestScanReplyOverCountIsPaged(t *testing.T) {
	backends(t, func(t *testing.T, b backend) {
		if b.real {
			raiseCompactLimits(t, b.w)
		}
		fillCompact(t, b.w)
		if b.real {
			ctx := context.Background()
			if enc := b.w.ObjectEncoding(ctx, "capped:hash").Val(); enc != "listpack" {
				t.Fatalf("the hash is %s, not listpack: the test would not see a whole reply", enc)
			}
		}
		for _, key := range []string{"capped:hash", "capped:set", "capped:zset"} {
			names, capped := walk(t, func(r value.Request) value.Page { return b.read(t, key, r) }, key)
			checkOnce(t, key, names)
			// The demo pages its sets by COUNT; only its hashes come whole.
			if (key == "capped:hash" || (b.real && key == "capped:set")) && !capped {
				t.Errorf("%s: no page says the server's reply was cut", key)
			}
		}
	})
}

// The same without scripts: plain HSCAN/SSCAN, the reply cut on arrival.
func TestScanReplyOverCountIsPagedWithoutScripts(t *testing.T) {
	rs := redistest.Start(t)
	ctx := context.Background()
	admin := rs.Client(0)
	if err := admin.Do(ctx, "ACL", "SETUSER", "noscript", "on", ">pw", "~*", "+@all", "-@scripting").Err(); err != nil {
		t.Fatal(err)
	}
	w := rs.Client(testDB)
	raiseCompactLimits(t, w)
	fillCompact(t, w)
	c := openURL(t, "redis://noscript:pw@"+rs.Addr+"/0")
	for _, key := range []string{"capped:hash", "capped:set"} {
		names, capped := walk(t, func(r value.Request) value.Page {
			pg, err := value.Read(ctx, c, testDB, key, r)
			if err != nil || pg.Path != "commands" {
				t.Fatalf("%s %+v: path %q, %v", key, r, pg.Path, err)
			}
			return pg
		}, key)
		checkOnce(t, key, names)
		if !capped {
			t.Errorf("%s: no page says the server's reply was cut", key)
		}
	}
}

// A scan position is a cursor or cursor:rows-shown; anything else is the
// request's fault.
func TestScanPosition(t *testing.T) {
	for _, tc := range []struct {
		at     string
		cursor string
		skip   int
		bad    bool
	}{
		{"", "0", 0, false}, {"17", "17", 0, false}, {"0:100", "0", 100, false},
		{"5:", "", 0, true}, {":5", "", 0, true}, {"05", "", 0, true}, {"1:05", "", 0, true},
		{"1:-2", "", 0, true}, {"1:2:3", "", 0, true}, {"x", "", 0, true}, {"1:99999999999", "", 0, true},
	} {
		c, s, err := value.ScanPosition(tc.at)
		if (err != nil) != tc.bad || (!tc.bad && (c != tc.cursor || s != tc.skip)) {
			t.Errorf("ScanPosition(%q) = %q, %d, %v", tc.at, c, s, err)
		}
	}
}
