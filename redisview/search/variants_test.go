package search_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/demo"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/redisview/search"
)

// trips counts what a client sends: one per command sent alone, one per
// pipeline (a new connection's handshake aside).
type trips struct{ n, cmds atomic.Int64 }

func (h *trips) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *trips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if !handshake(cmd) {
			h.n.Add(1)
			h.cmds.Add(1)
		}
		return next(ctx, cmd)
	}
}
func (h *trips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if len(cmds) > 0 && !handshake(cmds[0]) {
			h.n.Add(1)
			h.cmds.Add(int64(len(cmds)))
		}
		return next(ctx, cmds)
	}
}

func handshake(c redis.Cmder) bool {
	switch c.Name() {
	case "hello", "client", "select", "auth":
		return true
	}
	return false
}

var encodings = []struct {
	name string
	enc  *base64.Encoding
}{
	{"standard, padded", base64.StdEncoding},
	{"standard, unpadded", base64.RawStdEncoding},
	{"URL-safe, padded", base64.URLEncoding},
	{"URL-safe, unpadded", base64.RawURLEncoding},
}

// The seed says base64(account) and names no variant: an account's slider
// keys are found whichever encoding wrote them (here one of each, two for
// the fail counter, as two releases of a service might leave them), all
// derived and checked in one pipeline, without a SCAN; and "张三:vip"
// written by Java's default encoder (5byg5LiJOnZpcA==) is found typed bare.
func TestEveryBase64EncodingFoundInOnePipeline(t *testing.T) {
	rs, c := seeded(t)
	ctx := context.Background()
	acct := "Zoë:ops/β" // + or / and padding: four different names
	db4 := rs.Client(4)
	e := func(i int) string { return encodings[i].enc.EncodeToString([]byte(acct)) }
	want := map[string]string{
		"verify:slider:rate:create:account:" + e(0): "hash",
		"verify:slider:fail:account:" + e(1):        "string",
		"verify:slider:account:challenges:" + e(2):  "set",
		"verify:slider:fail:account:" + e(3):        "string",
	}
	db4.HSet(ctx, "verify:slider:rate:create:account:"+e(0), "tokens", "11", "ts", "1")
	db4.Set(ctx, "verify:slider:fail:account:"+e(1), "2", 10*time.Minute)
	db4.SAdd(ctx, "verify:slider:account:challenges:"+e(2), "c1")
	db4.Set(ctx, "verify:slider:fail:account:"+e(3), "1", 10*time.Minute)
	// A name that starts the same is not this one, in any encoding.
	for _, x := range encodings {
		db4.Set(ctx, "verify:slider:fail:account:"+x.enc.EncodeToString([]byte(acct+"x")), "1", time.Minute)
	}
	h := &trips{}
	c.DB(4).Ping(ctx) // the connection opens outside the count
	c.DB(4).AddHook(h)
	before, err := rs.CommandCalls(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r := run(t, c, "account="+acct, nil, search.DefaultLimits)
	after, err := rs.CommandCalls(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, hit := range r.Hits {
		if hit.DB == 4 {
			if hit.Scan || hit.Family == nil {
				t.Errorf("%s: %+v", hit.Key, hit)
			}
			got[hit.Key] = hit.Type
		}
	}
	if !maps(got, want) {
		t.Errorf("db4 hits %v, want %v", got, want)
	}
	// In db4, 3 families × 4 encodings, TYPE + PTTL each, in one round trip.
	if h.n.Load() != 1 || h.cmds.Load() != 24 {
		t.Errorf("db4: %d round trips of %d commands; want 1 of 24", h.n.Load(), h.cmds.Load())
	}
	if after["scan"] != before["scan"] || len(r.Scans) != 0 {
		t.Errorf("%d SCANs", after["scan"]-before["scan"])
	}

	// The case: written by Java's Base64.getEncoder(), typed bare.
	std := "verify:slider:rate:create:account:" + base64.StdEncoding.EncodeToString([]byte("张三:vip"))
	if std != "verify:slider:rate:create:account:5byg5LiJOnZpcA==" {
		t.Fatal(std)
	}
	db4.HSet(ctx, std, "tokens", "4", "ts", "1")
	r = run(t, c, "张三:vip", nil, search.DefaultLimits)
	if !slices.ContainsFunc(r.Hits, func(hit search.Hit) bool { return hit.DB == 4 && hit.Key == std && !hit.Scan && hit.Type == "hash" }) {
		t.Errorf("张三:vip: %+v", r.Hits)
	}
}

func maps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// A family the value fills only partly, in a base64 placeholder: keys in
// every encoding are found by one SCAN cursor, a longer name's are not.
func TestScanFindsEveryBase64Encoding(t *testing.T) {
	rs := redistest.Start(t)
	ctx := context.Background()
	p, err := schema.Load("t.yaml", []byte(`name: t
families:
  - id: f
    db: 0
    pattern: "x:{account:base64}:{n:digits}"
    type: string
    ttl: any
    domain: T
    role: cache
`))
	if err != nil {
		t.Fatal(err)
	}
	c, err := redisview.Open(redisview.ConnConfig{Name: "t", URL: rs.URL(0)}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.ForcePack(p)
	want := map[string]string{}
	for i, x := range encodings {
		k := "x:" + x.enc.EncodeToString([]byte("Zoë:ops/β")) + ":" + string(rune('1'+i))
		rs.Client(0).Set(ctx, k, "v", 0)
		want[k] = "string"
		rs.Client(0).Set(ctx, "x:"+x.enc.EncodeToString([]byte("Zoë:ops/βx"))+":1", "v", 0)
	}
	for i := range 100 {
		rs.Client(0).Set(ctx, "other:"+string(rune('a'+i%26))+string(rune('a'+i/26)), "v", 0)
	}
	r := run(t, c, "account=Zoë:ops/β", nil, search.DefaultLimits)
	got := map[string]string{}
	for _, h := range r.Hits {
		if !h.Scan {
			t.Errorf("%s not by scan", h.Key)
		}
		got[h.Key] = h.Type
	}
	if !maps(got, want) || len(r.Scans) != 1 || !r.Scans[0].Done {
		t.Errorf("hits %v, want %v; scans %+v", got, want, r.Scans)
	}
}

// The demo writes slider keys in standard padded base64 for some names
// and URL-safe unpadded for others (as the seed names no variant): a
// search finds a name of each, by derivation.
func TestSearchFindsBothEncodingsOnTheDemo(t *testing.T) {
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
	const prefix = "verify:slider:rate:create:account:"
	keys, _, err := c.DB(4).Scan(ctx, 0, prefix+"*", 10000).Result()
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(keys)
	// Which encoding wrote a name shows in "=", "+", "/" (standard,
	// padded) or in "-", "_" or a missing padding (URL-safe, unpadded).
	byEnc := map[string][]string{}
	for _, k := range keys {
		part := strings.TrimPrefix(k, prefix)
		switch std, url := strings.ContainsAny(part, "=+/"), strings.ContainsAny(part, "-_") || len(part)%4 != 0; {
		case std && !url:
			byEnc["standard, padded"] = append(byEnc["standard, padded"], k)
		case url && !std:
			byEnc["URL-safe, unpadded"] = append(byEnc["URL-safe, unpadded"], k)
		}
	}
	for _, enc := range []string{"standard, padded", "URL-safe, unpadded"} {
		found := false
		for _, k := range byEnc[enc] {
			m, ok := c.Pack().Classifier().Match(4, k)
			if !ok || !m.Vars[0].Decoded {
				t.Fatalf("%s: %+v", k, m)
			}
			r := run(t, c, m.Vars[0].Value, nil, search.DefaultLimits)
			if slices.ContainsFunc(r.Hits, func(h search.Hit) bool { return h.DB == 4 && h.Key == k && !h.Scan }) {
				found = true
				break
			}
			// The simulator may have let the bucket expire since: try the next.
			if n, _ := c.DB(4).Exists(ctx, k).Result(); n == 1 {
				t.Errorf("%s: %q (%s) not found: %+v", enc, m.Vars[0].Value, k, r.Hits)
				break
			}
		}
		if !found {
			t.Errorf("no %s bucket found by its name (candidates %q)", enc, byEnc[enc])
		}
	}
}

// The user page's read derives the account's slider keys in every
// encoding and reads them in one round trip to db4.
func TestUserFindsEveryBase64Encoding(t *testing.T) {
	rs := redistest.Start(t)
	ctx := context.Background()
	c, err := redisview.Open(redisview.ConnConfig{Name: "t", URL: rs.URL(0)}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.ForcePack(schema.BuiltinPack("eisland"))
	acct := "Zoë:ops/β"
	db4 := rs.Client(4)
	want := map[string]bool{}
	for i, x := range encodings {
		k := []string{"verify:slider:rate:create:account:", "verify:slider:fail:account:", "verify:slider:account:challenges:", "verify:slider:fail:account:"}[i] + x.enc.EncodeToString([]byte(acct))
		db4.Set(ctx, k, "1", time.Minute)
		want[k] = true
		db4.Set(ctx, "verify:slider:fail:account:"+x.enc.EncodeToString([]byte(acct+"x")), "1", time.Minute)
	}
	h := &trips{}
	c.DB(4).Ping(ctx)
	c.DB(4).AddHook(h)
	x := &selectTrips{db: 4} // db4's reads in a cross-database pipeline
	c.AddHook(x)
	r, err := search.RunUser(ctx, c, search.UserQuery{Subject: search.Subject{Name: acct}, Scan: true, Reprobe: true}, search.DefaultUserLimits)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, hit := range r.Hits {
		if hit.DB == 4 {
			got[hit.Key] = !hit.Scan
		}
	}
	if len(got) != len(want) {
		t.Errorf("db4 hits %v, want %v", got, want)
	}
	for k := range want {
		if !got[k] {
			t.Errorf("%s not derived", k)
		}
	}
	if n := h.n.Load() + x.n.Load(); n != 1 {
		t.Errorf("%d round trips to db4, want 1", n)
	}
}

// selectTrips counts the pipelines that SELECT db: a cross-database
// pipeline's reads of it.
type selectTrips struct {
	db int
	n  atomic.Int64
}

func (h *selectTrips) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (h *selectTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (h *selectTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if slices.ContainsFunc(cmds, func(c redis.Cmder) bool {
			a := c.Args()
			return c.Name() == "select" && len(a) == 2 && fmt.Sprint(a[1]) == strconv.Itoa(h.db)
		}) {
			h.n.Add(1)
		}
		return next(ctx, cmds)
	}
}
