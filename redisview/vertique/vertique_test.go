package vertique_test

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/demo"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/redisview/vertique"
)

// The key is derived exactly as seed 002 and DESIGN.md specify:
// <namespace>:v1:<first 8 hex of SHA-256(secret)>:<hex HMAC-SHA-256(secret,
// "policyName:policyRevision:canonicalKeyEncoding")>. The expected values
// were computed with Python's hashlib and hmac, independently of Go:
//
//	sec = b'keydeck-demo-vertique-secret-2026'
//	msg = 'login-attempts:3:6:李雷,'
//	hashlib.sha256(sec).hexdigest()[:8]                       # 150cfbcb
//	hmac.new(sec, msg.encode(), hashlib.sha256).hexdigest()   # 54f4a50b…
func TestKeyDerivation(t *testing.T) {
	f, err := vertique.Family(schema.BuiltinPack("vertique"))
	if err != nil {
		t.Fatal(err)
	}
	secret := []byte("keydeck-demo-vertique-secret-2026")
	if fp := vertique.Fingerprint(secret); fp != "150cfbcb" {
		t.Errorf("fingerprint %s, want 150cfbcb", fp)
	}
	canon := vertique.CanonicalKey("李雷")
	if canon != "6:李雷," {
		t.Errorf("netstring %q, want a byte-length netstring", canon)
	}
	got, err := vertique.Key(f, secret, "login-attempts", "3", canon)
	if err != nil {
		t.Fatal(err)
	}
	want := "vertique:rate-limit:v1:150cfbcb:54f4a50bcf633847de7bd66b93bd91ee6fb3e1b51b5477967e078161e24b620c"
	if got != want {
		t.Errorf("key\n %s\nwant\n %s", got, want)
	}
	// The demo writes its buckets with its own derivation: both agree.
	if d := demo.VertiqueKey(demo.VertiqueNamespace, demo.DemoSecret, "api-requests", "7", demo.CanonicalKey("acme", "ak_live_7Hq2")); d != mustKey(t, f, []byte(demo.DemoSecret), "api-requests", "7", vertique.CanonicalKey("acme", "ak_live_7Hq2")) {
		t.Errorf("the demo's key %s differs", d)
	}
	// Every input changes the key.
	for _, in := range [][3]string{{"login-attempts", "4", canon}, {"login-attempt", "3", canon}, {"login-attempts", "3", "6:李雷"}} {
		if k := mustKey(t, f, secret, in[0], in[1], in[2]); k == want {
			t.Errorf("%q derives the same key", in)
		}
	}
}

func mustKey(t *testing.T, f *schema.Family, secret []byte, p, r, c string) string {
	t.Helper()
	k, err := vertique.Key(f, secret, p, r, c)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// The inventory counts the buckets of each generation, measures their
// memory, and stays within its SCAN budget.
func TestInventoryByGeneration(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	c := srv.Client(0)
	cur, old := []byte("secret-now"), []byte("secret-before")
	state := demo.EncodeBucketState(demo.BucketState{Format: 1,
		Bandwidths: []demo.Bandwidth{{Capacity: 5, InitialTokens: 5, RefillPeriodNanos: int64(time.Minute), RefillTokens: 5, TimeOfFirstRefillMillis: demo.NotAligned}},
		States:     []demo.BandwidthState{{LastRefillNanos: time.Now().UnixNano(), Tokens: 3}}})
	f, err := vertique.Family(schema.BuiltinPack("vertique"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		c.Set(ctx, mustKey(t, f, cur, "p", "1", strconv.Itoa(i)), state, time.Hour)
	}
	for i := range 12 {
		ttl := time.Minute
		if i == 0 {
			ttl = 0 // a bucket that will never expire
		}
		c.Set(ctx, mustKey(t, f, old, "p", "1", strconv.Itoa(i)), state, ttl)
	}
	c.Set(ctx, "unrelated", "x", 0)
	conn, err := redisview.Open(redisview.ConnConfig{Name: "v", URL: srv.URL(0)}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.ForcePack(schema.BuiltinPack("vertique"))

	inv, err := vertique.Walk(ctx, conn, f, vertique.Fingerprint(cur), vertique.DefaultBudget, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if !inv.Complete || len(inv.Generations) != 2 {
		t.Fatalf("complete %v, %d generations; want a complete walk, 2", inv.Complete, len(inv.Generations))
	}
	g0, g1 := inv.Generations[0], inv.Generations[1]
	if !g0.Current || g0.Fingerprint != vertique.Fingerprint(cur) || g0.Keys != 30 || g0.NoTTL != 0 {
		t.Errorf("current generation %+v, want 30 keys of %s", g0, vertique.Fingerprint(cur))
	}
	if g1.Current || g1.Fingerprint != vertique.Fingerprint(old) || g1.Keys != 12 || g1.NoTTL != 1 || g1.MaxTTL > time.Minute {
		t.Errorf("old generation %+v, want 12 keys of %s, one without TTL", g1, vertique.Fingerprint(old))
	}
	if g0.MemKeys != 30 || g0.Memory < 30*int64(len(state)) {
		t.Errorf("memory of the current generation %d bytes over %d keys", g0.Memory, g0.MemKeys)
	}

	// A budget of 2 SCAN calls of COUNT 5 stops early and says so.
	before, _ := srv.CommandCalls(ctx)
	inv, err = vertique.Walk(ctx, conn, f, "", vertique.Budget{Scans: 2, Count: 5}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	after, _ := srv.CommandCalls(ctx)
	if inv.Complete || inv.Scans != 2 || after["scan"]-before["scan"] != 2 {
		t.Errorf("budgeted walk: complete %v, %d scans (server counted %d); want partial, 2", inv.Complete, inv.Scans, after["scan"]-before["scan"])
	}
	if n := after["get"] - before["get"]; n != 0 {
		t.Errorf("the inventory read %d values", n)
	}
}
