package decode_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

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

// getrangeCounter counts the GETRANGE commands a client sends.
type getrangeCounter struct{ n atomic.Int64 }

func (h *getrangeCounter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *getrangeCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.count(cmd)
		return next(ctx, cmd)
	}
}
func (h *getrangeCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, c := range cmds {
			h.count(c)
		}
		return next(ctx, cmds)
	}
}
func (h *getrangeCounter) count(c redis.Cmder) {
	if c.Name() == "getrange" {
		h.n.Add(1)
	}
}

// A body longer than MaxCheckedBody is measured and never read: not even
// its first 64 KiB cross the wire (a live list of 50 such keys would move
// 3 MB a tick).
func TestResponseCacheLongBodyIsNotRead(t *testing.T) {
	db := redistest.Start(t).Client(0)
	ctx := context.Background()
	const k = "cache:exact:chat-default:big"
	db.Set(ctx, k, `"`+strings.Repeat("a", 1<<20)+`"`, time.Minute)
	h := &getrangeCounter{}
	db.AddHook(h)
	rc := decode.As[decode.ResponseCache](gwDec(t, db, k, decode.Env{}))
	if rc == nil || rc.Checked || rc.Bytes != 1<<20+2 {
		t.Fatalf("a 1 MiB body: %+v", rc)
	}
	if n := h.n.Load(); n != 0 {
		t.Fatalf("%d GETRANGE sent for a body over %d bytes", n, decode.MaxCheckedBody)
	}
}
