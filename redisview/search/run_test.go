package search_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/demo"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/redisview/search"
)

// seeded is a redis-server holding the eIsland seed, watched with the
// eisland pack.
func seeded(t *testing.T) (*redistest.Server, *redisview.Conn) {
	t.Helper()
	rs := redistest.Start(t)
	ctx := context.Background()
	if err := demo.SeedEIsland(ctx, func(db int) redis.Cmdable { return rs.Client(db) }, time.Now()); err != nil {
		t.Fatal(err)
	}
	c, err := redisview.Open(redisview.ConnConfig{Name: "t", URL: rs.URL(0)}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.ForcePack(schema.BuiltinPack("eisland"))
	return rs, c
}

func run(t *testing.T, c *redisview.Conn, q string, cursors map[string]redisview.Cursor, lim search.Limits) search.Result {
	t.Helper()
	r, err := search.Run(context.Background(), c, search.Parse(q, c.Pack()), cursors, lim)
	if err != nil {
		t.Fatalf("search %q: %v", q, err)
	}
	return r
}

// A unicode account name finds its slider keys in db4 through base64
// derivation, without a single SCAN.
func TestAccountFoundByDerivationWithoutScan(t *testing.T) {
	rs, c := seeded(t)
	ctx := context.Background()
	acct := "Zoë:ops/β"
	enc := demo.SliderKeyPart(acct)
	db4 := rs.Client(4)
	db4.SAdd(ctx, "verify:slider:account:challenges:"+enc, "c1")
	db4.Expire(ctx, "verify:slider:account:challenges:"+enc, time.Minute)
	db4.HSet(ctx, "verify:slider:rate:create:account:"+enc, "tokens", "11", "ts", "1")
	db4.Set(ctx, "verify:slider:fail:account:"+enc, "2", 10*time.Minute)
	// A neighbour whose name starts the same is not Zoë.
	db4.Set(ctx, "verify:slider:fail:account:"+demo.SliderKeyPart(acct+"x"), "1", time.Minute)
	// Named as an account, the search is derivation alone: not one SCAN.
	before, err := rs.CommandCalls(ctx)
	if err != nil {
		t.Fatal(err)
	}
	named := run(t, c, "account="+acct, nil, search.DefaultLimits)
	after, err := rs.CommandCalls(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if after["scan"] != before["scan"] || len(named.Scans) != 0 {
		t.Fatalf("an account= search ran %d SCANs", after["scan"]-before["scan"])
	}
	if after["keys"] != before["keys"] {
		t.Fatal("KEYS was called")
	}
	checkSlider(t, named, enc)
	// Typed bare, the name may also be a username in keys that hold more
	// than the name (scanned elsewhere), but db4 is still derived only:
	// every SCAN the server counted is one the result reports, none in db4.
	before, _ = rs.CommandCalls(ctx)
	bare := run(t, c, acct, nil, search.DefaultLimits)
	after, _ = rs.CommandCalls(ctx)
	calls := 0
	for _, s := range bare.Scans {
		calls += s.Calls
		if s.DB == 4 {
			t.Errorf("db4 scanned for an account: %+v", s)
		}
	}
	if after["scan"]-before["scan"] != int64(calls) {
		t.Errorf("server counted %d SCANs, result says %d", after["scan"]-before["scan"], calls)
	}
	checkSlider(t, bare, enc)
}

func checkSlider(t *testing.T, r search.Result, enc string) {
	t.Helper()
	got := map[string]search.Hit{}
	for _, h := range r.Hits {
		if h.DB == 4 {
			got[h.Key] = h
		}
	}
	want := map[string]string{
		"verify:slider:account:challenges:" + enc:  "set",
		"verify:slider:rate:create:account:" + enc: "hash",
		"verify:slider:fail:account:" + enc:        "string",
	}
	if len(got) != len(want) {
		t.Fatalf("db4 hits %v", got)
	}
	for k, typ := range want {
		h, ok := got[k]
		if !ok || h.Type != typ || h.Scan || h.Family == nil {
			t.Errorf("%s: %+v", k, h)
		}
	}
	if h := got["verify:slider:fail:account:"+enc]; h.TTL <= 0 || h.TTL > 10*time.Minute {
		t.Errorf("fail counter TTL %v", h.TTL)
	}
	if h := got["verify:slider:rate:create:account:"+enc]; h.TTL != -1 {
		t.Errorf("persistent bucket TTL %v", h.TTL)
	}
	if r.Checked < 3 {
		t.Errorf("checked %d", r.Checked)
	}
}

// A username finds its login-failure keys (one placeholder: derived) and
// its feedback counters, whose key also holds an IP, by a scan with the
// username filled in.
func TestUsernameFoundByScanWithValueFilledIn(t *testing.T) {
	rs, c := seeded(t)
	ctx := context.Background()
	user := "zoë.k"
	rs.Client(6).ZAdd(ctx, "auth:limit:login:failures:"+user, redis.Z{Score: 1, Member: "1:1"})
	fb := rs.Client(8)
	fb.Set(ctx, "issue-feedback:submit:"+user+":10.0.0.7", 1, time.Hour)
	fb.Set(ctx, "issue-feedback:submit:"+user+":10.0.0.8", 2, time.Hour)
	fb.Set(ctx, "issue-feedback:submit:"+user+"x:10.0.0.9", 1, time.Hour) // another user
	before, _ := rs.CommandCalls(ctx)
	r := run(t, c, user, nil, search.DefaultLimits)
	after, _ := rs.CommandCalls(ctx)
	if after["scan"] == before["scan"] {
		t.Fatal("no SCAN ran")
	}
	var derived, scanned []string
	for _, h := range r.Hits {
		if h.Scan {
			scanned = append(scanned, fmt.Sprintf("%d %s %s", h.DB, h.Family.ID, h.Key))
		} else {
			derived = append(derived, fmt.Sprintf("%d %s %s", h.DB, h.Family.ID, h.Key))
		}
	}
	wantScanned := "8 issue-feedback-submit issue-feedback:submit:zoë.k:10.0.0.7,8 issue-feedback-submit issue-feedback:submit:zoë.k:10.0.0.8"
	if strings.Join(scanned, ",") != wantScanned {
		t.Errorf("scanned %v\nwant %s", scanned, wantScanned)
	}
	if strings.Join(derived, ",") != "6 login-failures auth:limit:login:failures:zoë.k" {
		t.Errorf("derived %v", derived)
	}
	for _, s := range r.Scans {
		if !s.Done || !s.Started {
			t.Errorf("scan %s of db%d not finished on a small server: %+v", s.ID, s.DB, s)
		}
	}
	if r.Cursors() != "" {
		t.Errorf("nothing to continue, got %q", r.Cursors())
	}
}

// A glob search stops at its cap and says where; continuing carries on
// from the cursors without repeating keys.
func TestGlobStopsAtCapAndContinues(t *testing.T) {
	rs, c := seeded(t)
	ctx := context.Background()
	p := rs.Client(7).Pipeline()
	for i := range 3000 {
		p.Set(ctx, fmt.Sprintf("bulk:%05d", i), i, 0)
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	lim := search.Limits{Calls: 50, Count: 100, Cap: 200, Time: 5 * time.Second}
	r := run(t, c, "bulk:*", nil, lim)
	if !r.Capped || len(r.Hits) != 200 {
		t.Fatalf("capped %v hits %d", r.Capped, len(r.Hits))
	}
	dropped := r.Dropped
	cur := r.Cursors()
	if !strings.Contains(cur, "7.0:") {
		t.Fatalf("cursors %q", cur)
	}
	seen := map[string]bool{}
	for _, h := range r.Hits {
		if h.DB != 7 || !strings.HasPrefix(h.Key, "bulk:") || h.Type != "string" {
			t.Fatalf("hit %+v", h)
		}
		seen[h.Key] = true
	}
	for pages := 0; cur != "" && pages < 100; pages++ {
		m, err := search.ParseCursors(cur)
		if err != nil {
			t.Fatal(err)
		}
		r = run(t, c, "bulk:*", m, lim)
		if !r.Continued || r.Checked != 0 {
			t.Fatalf("continue: %+v", r)
		}
		if len(r.Hits) > 200 {
			t.Fatalf("%d keys listed past the cap", len(r.Hits))
		}
		for _, h := range r.Hits {
			if seen[h.Key] {
				t.Fatalf("%s listed twice", h.Key)
			}
			seen[h.Key] = true
		}
		dropped += r.Dropped
		cur = r.Cursors()
	}
	// Every key is listed once, or counted among those a capped SCAN
	// call returned past the cap.
	if len(seen)+dropped != 3000 {
		t.Fatalf("continuing listed %d and dropped %d of 3000 keys", len(seen), dropped)
	}
	// The budget stops a scan before the cap: 2 calls of COUNT 10.
	r = run(t, c, "nothing-like-this:*", nil, search.Limits{Calls: 2, Count: 10, Cap: 200, Time: 5 * time.Second})
	for _, s := range r.Scans {
		if s.Calls > 2 || s.DB == 7 && (s.Done || s.Examined != 20 || s.DBKeys < 3000) {
			t.Errorf("budget: %+v", s)
		}
	}
}

// On the embedded demo (miniredis, whose SCAN ignores COUNT and returns a
// whole database at once), a search finds what it finds on Redis: an
// account's slider keys derived, a user's mini-game keys by scan, and a
// glob of every key stops at the cap and counts what it did not list.
func TestSearchOnTheDemo(t *testing.T) {
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	d, err := demo.Start(ctx, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	var c *redisview.Conn
	for _, dc := range d.Connections() {
		if dc.Name == "eisland" {
			if c, err = redisview.Open(redisview.ConnConfig{Name: dc.Name, URL: dc.URL}, log); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Cleanup(func() { c.Close() })
	c.ForcePack(schema.BuiltinPack("eisland"))
	// ops:admin has a token bucket of challenge creations (seeded).
	r := run(t, c, "ops:admin", nil, search.DefaultLimits)
	var derived, scanned bool
	for _, h := range r.Hits {
		if h.DB == 4 && h.Key == "verify:slider:rate:create:account:"+demo.SliderKeyPart("ops:admin") && !h.Scan && h.Type == "hash" {
			derived = true
		}
		if h.DB == 14 && h.Scan && strings.HasSuffix(h.Key, ":ops:admin") {
			scanned = true
		}
	}
	if !derived || !scanned {
		t.Errorf("derived slider bucket %v, mini-game keys by scan %v: %+v", derived, scanned, r.Hits)
	}
	// The demo's simulated traffic may delete or expire a key between the
	// SCAN that listed it and the TYPE that describes it: it is dropped.
	r = run(t, c, "*", nil, search.DefaultLimits)
	if !r.Capped || len(r.Hits) > search.DefaultLimits.Cap || len(r.Hits) < search.DefaultLimits.Cap-10 || r.Dropped == 0 || r.Cursors() == "" {
		t.Errorf("glob *: capped %v, %d listed, %d dropped, cursors %q", r.Capped, len(r.Hits), r.Dropped, r.Cursors())
	}
}
