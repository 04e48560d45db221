package handlers

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
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/schema"
)

// A sensitive family of a decodable role says so without reading Redis
// (the nil connection would panic); a role without a decoder shows nothing.
func TestKeyDecodedSensitive(t *testing.T) {
	t.Parallel()
	m := schema.Match{Family: &schema.Family{ID: "x", Type: "hash", Role: schema.RoleTokenBucket, Sensitive: true, Params: &schema.TokenBucketParams{Capacity: 1}}}
	vm := keyDecoded(context.Background(), nil, 0, "k", "hash", m, time.Now())
	if !vm.Withheld || vm.Summary != "" || len(vm.Rows) != 0 || vm.Role != "token-bucket" {
		t.Fatalf("sensitive bucket: %+v", vm)
	}
	m.Family = &schema.Family{ID: "c", Type: "string", Role: schema.RoleCache}
	if vm := keyDecoded(context.Background(), nil, 0, "k", "string", m, time.Now()); vm.Role != "" {
		t.Fatalf("cache: %+v", vm)
	}
}

// A vertique bucket decodes from Bucket4j bytes; an unknown layout says so
// with its length only.
func TestKeyDecodedBucket4j(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	conn, err := redisview.Open(redisview.ConnConfig{Name: "v", URL: rs.URL(0)}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 1, 0, 0, 0, time.UTC)
	state := demo.EncodeBucketState(demo.BucketState{Format: 1,
		Bandwidths: []demo.Bandwidth{{Capacity: 20, InitialTokens: 20, RefillPeriodNanos: int64(time.Minute), RefillTokens: 20, TimeOfFirstRefillMillis: demo.NotAligned, ID: "<b>api</b>"}},
		States:     []demo.BandwidthState{{LastRefillNanos: now.UnixNano(), Tokens: 0}}})
	rs.Client(0).Set(ctx, "b", state, time.Minute)
	m := schema.Match{Family: schema.BuiltinPack("vertique").Families[0]}
	vm := keyDecoded(ctx, conn, 0, "b", "string", m, now.Add(3*time.Second))
	if vm.Summary != "1 of 20 tokens now" || vm.Note != "" || !strings.Contains(fmt.Sprint(vm.Rows), "Bandwidth 1 (<b>api</b>)") {
		t.Fatalf("bucket4j: %+v", vm)
	}
	rs.Client(0).Set(ctx, "b", "not a bucket", time.Minute)
	if vm = keyDecoded(ctx, conn, 0, "b", "string", m, now); vm.Note != "Not decoded: unrecognised state (12 bytes)." || len(vm.Rows) != 0 {
		t.Fatalf("unknown layout: %+v", vm)
	}
}

// openWith is a connection to rs with pack p forced, as --pack-for does.
func openWith(t *testing.T, rs *redistest.Server, name string, p *schema.Pack) *redisview.Conn {
	t.Helper()
	conn, err := redisview.Open(redisview.ConnConfig{Name: name, URL: rs.URL(0)}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.ForcePack(p)
	return conn
}

// Every role decoded has a one-line summary, and its panel the rows and
// alert its state calls for; the state is written as the seeds write it.
func TestKeyDecodedSummaries(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	ctx := context.Background()
	gw := openWith(t, rs, "gw", schema.BuiltinPack("gateway"))
	ei := openWith(t, rs, "ei", schema.BuiltinPack("eisland"))
	now := time.Now()
	g := rs.Client(0)
	g.Set(ctx, "q:reserved:req_a", 8192, 5*time.Minute)
	g.PExpire(ctx, "q:reserved:req_a", 200*time.Second)
	g.Set(ctx, "q:reserved:req_forgot", 4096, 0)
	g.SAdd(ctx, "q:conc:k1", "req_a", "req_crashed")
	g.Expire(ctx, "q:conc:k1", 5*time.Minute)
	g.Set(ctx, "cb:hint:openai:gpt-4o", "open", 30*time.Second)
	rs.Client(14).ZAdd(ctx, "mg:score:leaderboard:g1", redis.Z{Score: 9000, Member: "u2"}, redis.Z{Score: 10, Member: "u1"})
	for _, it := range []string{"a", "b"} {
		for _, p := range redisview.BloomPositions(it, 1000003, 6) {
			rs.Client(9).SetBit(ctx, "user:ban:bloom", p, 1)
		}
		rs.Client(9).SAdd(ctx, "user:ban:set", it)
	}
	rs.Client(2).Set(ctx, "verify:cooldown:LOGIN:a@b.c", "1", time.Minute)
	rs.Client(2).IncrBy(ctx, "verify:attempts:LOGIN:a@b.c", 5)
	rs.Client(14).SetNX(ctx, "mg:score:idempotency:s1", "1", 24*time.Hour)
	rs.Client(13).HIncrBy(ctx, "agent:usage:gpt-4o", "inputTokens", 12000)
	rs.Client(2).Set(ctx, "verify:code:LOGIN:a@b.c", "5e884898da28047151d0e56f8dc62927", 5*time.Minute)

	for _, c := range []struct {
		conn    *redisview.Conn
		db      int
		key     string
		typ     string
		summary string // prefix
		alert   string // substring; "" wants none
		row     string // substring of the rows
	}{
		{gw, 0, "q:reserved:req_a", "string", "8192 tokens reserved, 3m ", "", "Age:about 1m 4"}, // 1m 40s as seeded; a second may pass before the read,
		{gw, 0, "q:reserved:req_forgot", "string", "4096 tokens reserved, no TTL", "a reservation must expire", "TTL left:none"},
		{gw, 0, "q:conc:k1", "set", "2 in flight", "1 in-flight request has no reservation", "Cap:none in the pack"},
		{gw, 0, "cb:hint:openai:gpt-4o", "string", "open, ", "", "State:open: a replica opened its breaker"},
		{ei, 14, "mg:score:leaderboard:g1", "zset", "2 entries, top u2 (9,000)", "", "Live leaderboard:open the leaderboard page"},
		{ei, 9, "user:ban:bloom", "string", "12 bits set (0.00% full), false positives ≈ ", "", "Exact members:2 in user:ban:set"},
		{ei, 2, "verify:cooldown:LOGIN:a@b.c", "string", "Cooling down, ", "", "Ends at:"},
		{ei, 2, "verify:attempts:LOGIN:a@b.c", "string", "5 of 5", "Limit reached (lock)", "TTL left:no TTL"},
		{ei, 14, "mg:score:idempotency:s1", "string", "Done, forgotten in 2", "", "Value:1"},
		{ei, 13, "agent:usage:gpt-4o", "hash", "inputTokens 12,000", "", "cachedTokens:absent"},
	} {
		m, ok := c.conn.Classifier().Match(c.db, c.key)
		if !ok {
			t.Fatalf("%s does not classify", c.key)
		}
		vm := keyDecoded(ctx, c.conn, c.db, c.key, c.typ, m, now)
		var rows []string
		for _, r := range vm.Rows {
			rows = append(rows, r.Label+":"+r.Value)
		}
		if vm.Note != "" || !strings.HasPrefix(vm.Summary, c.summary) || !strings.Contains(vm.Alert, c.alert) || (c.alert == "") != (vm.Alert == "") ||
			!strings.Contains(strings.Join(rows, "|"), c.row) {
			t.Errorf("%s: summary %q alert %q note %q rows %q", c.key, vm.Summary, vm.Alert, vm.Note, rows)
		}
	}

	// The concurrency set's members: the reserved one links its
	// reservation's key page, the crashed one is flagged.
	m, _ := gw.Classifier().Match(0, "q:conc:k1")
	vm := keyDecoded(ctx, gw, 0, "q:conc:k1", "set", m, now)
	links := map[string]string{}
	for _, mb := range vm.Members {
		links[mb.Name] = mb.Href + "|" + mb.Flag
	}
	if links["req_a"] != route.KeyURL("gw", 0, "q:reserved:req_a")+"|" || links["req_crashed"] != "|no reservation" {
		t.Fatalf("members: %v", links)
	}

	// A sensitive family: withheld, empty summary, nothing read or shown,
	// whatever its role.
	m, _ = ei.Classifier().Match(2, "verify:code:LOGIN:a@b.c")
	if vm := keyDecoded(ctx, ei, 2, "verify:code:LOGIN:a@b.c", "string", m, now); !vm.Withheld || vm.Summary != "" || len(vm.Rows) != 0 || vm.Role != "verification-code" {
		t.Fatalf("sensitive: %+v", vm)
	}
}
