package decode_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview/decode"
)

// A gateway cached response (cache:exact, seed 003: a JSON response body
// with its route's TTL): its size and TTL, and whether the body parses;
// one longer than MaxCheckedBody is measured, not read.
func TestResponseCache(t *testing.T) {
	db := redistest.Start(t).Client(0)
	ctx := context.Background()
	const k = "cache:exact:chat-default:0f3a"
	db.Set(ctx, k, `{"id":"chatcmpl-1","choices":[]}`, 10*time.Minute)
	rc := decode.As[decode.ResponseCache](gwDec(t, db, k, decode.Env{}))
	if rc == nil || rc.Bytes != 32 || !rc.Checked || !rc.Valid || rc.Content != "json" || rc.TTL <= 9*time.Minute {
		t.Fatalf("cached response: %+v", rc)
	}
	db.Set(ctx, k, `{"id":"chatcmpl-1","choi`, 0)
	if rc = decode.As[decode.ResponseCache](gwDec(t, db, k, decode.Env{})); rc == nil || rc.Valid || !rc.Checked || rc.TTL >= 0 {
		t.Fatalf("a cut body without a TTL: %+v", rc)
	}
	long := `"` + strings.Repeat("a", decode.MaxCheckedBody) + `"`
	db.Set(ctx, k, long, time.Minute)
	if rc = decode.As[decode.ResponseCache](gwDec(t, db, k, decode.Env{})); rc == nil || rc.Checked || rc.Valid || rc.Bytes != int64(len(long)) {
		t.Fatalf("a body over %d bytes: %+v", decode.MaxCheckedBody, rc)
	}
	if r := gwDec(t, db, "cache:exact:chat-default:gone", decode.Env{}); r.State != nil || r.Note != "the key is gone" {
		t.Fatalf("a gone key: %+v", r)
	}
}
