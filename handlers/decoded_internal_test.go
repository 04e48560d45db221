package handlers

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/demo"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/schema"
)

// A sensitive family of a decodable role says so without reading Redis
// (the nil connection would panic); a role without a decoder shows nothing.
func TestKeyDecodedSensitive(t *testing.T) {
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
