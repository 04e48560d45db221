package decode_test

import (
	"context"
	"encoding/base64"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/demo"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/schema"
)

var eisland = schema.BuiltinPack("eisland").Classifier()

func match(t *testing.T, db int, key string) schema.Match {
	t.Helper()
	m, ok := eisland.Match(db, key)
	if !ok {
		t.Fatalf("%q does not classify in db %d", key, db)
	}
	return m
}

func dec(t *testing.T, c redis.Cmdable, db int, key string, now time.Time) decode.Result {
	t.Helper()
	r, err := decode.Decode(context.Background(), c, match(t, db, key), key, now)
	if err != nil {
		t.Fatalf("decode %q: %v", key, err)
	}
	return r
}

// A slider bucket written by the seed's own Lua is refilled at read time by
// the pack's 12 a minute (one token per 5 s), capped at capacity; an empty
// one refuses a request and says when one is allowed again.
func TestTokenBucketRefillsAtReadTime(t *testing.T) {
	db := redistest.Start(t).Client(4)
	ctx := context.Background()
	key := "verify:slider:rate:create:account:" + base64.RawURLEncoding.EncodeToString([]byte("ada"))
	t0 := time.Date(2026, 12, 1, 1, 0, 0, 0, time.UTC)
	script := redis.NewScript(demo.SliderTokenBucketSource)
	for range 12 { // drain all 12 at t0
		if err := script.Run(ctx, db, []string{key}, t0.UnixMilli(), 12, 12.0/60000, 1, 120).Err(); err != nil {
			t.Fatal(err)
		}
	}
	r := dec(t, db, 4, key, t0)
	tb := decode.As[decode.TokenBucket](r)
	if tb == nil || tb.Tokens != 0 || tb.Capacity != 12 || !tb.Refused || tb.RetryAfter != 5*time.Second || tb.ToFull != time.Minute || !tb.LastRefill.Equal(t0) {
		t.Fatalf("drained bucket at t0: %+v (note %q)", tb, r.Note)
	}
	tb = decode.As[decode.TokenBucket](dec(t, db, 4, key, t0.Add(12500*time.Millisecond)))
	if tb.Tokens != 2.5 || tb.Refused || tb.ToFull != 47500*time.Millisecond || tb.Stored != 0 {
		t.Fatalf("12.5 s later: %+v", tb)
	}
	tb = decode.As[decode.TokenBucket](dec(t, db, 4, key, t0.Add(time.Hour)))
	if tb.Tokens != 12 || tb.ToFull != 0 || tb.Refused {
		t.Fatalf("an hour later: %+v", tb)
	}
	// A last refill in the future (clock skew) adds nothing.
	if tb = decode.As[decode.TokenBucket](dec(t, db, 4, key, t0.Add(-time.Minute))); tb.Tokens != 0 {
		t.Fatalf("before the last refill: %+v", tb)
	}
	// A bucket whose tokens are not a number is said so, not guessed.
	db.HSet(ctx, key, "tokens", "lots")
	if r := dec(t, db, 4, key, t0); decode.As[decode.TokenBucket](r) != nil || r.Note == "" {
		t.Fatalf("bad tokens: %+v", r)
	}
}

// A fixed window written by INCR + EXPIRE: count against the limit, resets
// in its TTL.
func TestCounterWindow(t *testing.T) {
	db := redistest.Start(t).Client(2)
	ctx := context.Background()
	key := "verify:rate:ip:10.0.0.1"
	script := redis.NewScript(demo.RateLimitIncrExpireSource)
	for i := range 3 {
		script.Run(ctx, db, []string{key}, 3600)
		r := dec(t, db, 2, key, time.Now())
		cw := decode.As[decode.CounterWindow](r)
		if cw == nil || cw.Count != int64(i+1) || cw.Limit != 3 || cw.Window != time.Hour || cw.ResetsIn <= 59*time.Minute || cw.Reached != (i == 2) {
			t.Fatalf("after %d hits: %+v (note %q)", i+1, cw, r.Note)
		}
	}
	db.Set(ctx, key, string(make([]byte, 1000)), 0)
	if r := dec(t, db, 2, key, time.Now()); decode.As[decode.CounterWindow](r) != nil || r.Note == "" {
		t.Fatalf("a 1000-byte count: %+v", r)
	}
}

// Login failures: events inside the last 5 minutes against 5, the oldest
// and newest of them, and whether the login lock is set.
func TestSlidingWindowAndLock(t *testing.T) {
	db := redistest.Start(t).Client(6)
	ctx := context.Background()
	m := match(t, 6, "auth:limit:login:failures:ada")
	if m.Family.ID != "login-failures" {
		t.Fatalf("login failures are family %s, not login-failures: the test reads a sliding window with its lock", m.Family.ID)
	}
	now := time.Date(2026, 12, 1, 1, 0, 0, 0, time.UTC)
	key := "auth:limit:login:failures:ada"
	for _, ago := range []time.Duration{10 * time.Minute, 4 * time.Minute, 3 * time.Minute, time.Minute, 2 * time.Minute, 10 * time.Second} {
		ms := now.Add(-ago).UnixMilli()
		db.ZAdd(ctx, key, redis.Z{Score: float64(ms), Member: strconv.FormatInt(ms, 10) + ":1"})
	}
	r := dec(t, db, 6, key, now)
	sw := decode.As[decode.SlidingWindow](r)
	if sw == nil || sw.InWindow != 5 || sw.Total != 6 || sw.Limit != 5 || !sw.Reached || sw.Locked ||
		!sw.Oldest.Equal(now.Add(-4*time.Minute)) || !sw.Newest.Equal(now.Add(-10*time.Second)) || sw.LockKey != "auth:limit:login:lock:ada" {
		t.Fatalf("window: %+v (note %q)", sw, r.Note)
	}
	until := now.Add(10 * time.Minute)
	db.Set(ctx, sw.LockKey, strconv.FormatInt(until.UnixMilli(), 10), 10*time.Minute)
	if sw = decode.As[decode.SlidingWindow](dec(t, db, 6, key, now)); !sw.Locked {
		t.Fatalf("the lock is set: %+v", sw)
	}
	l := decode.As[decode.Lock](dec(t, db, 6, "auth:limit:login:lock:ada", now))
	if l == nil || !l.Until.Equal(until) || !l.Expected || l.TTL <= 9*time.Minute {
		t.Fatalf("login lock: %+v", l)
	}
	// A payment lock names its holder.
	const holder = "3f2a5c1e-0b7d-4e8a-9c6f-1a2b3c4d5e6f"
	pk := "payment:order:op-lock:T123"
	db9 := redistest.Start(t).Client(lockDB(t, pk))
	db9.Set(ctx, pk, holder, 30*time.Second)
	l = decode.As[decode.Lock](dec(t, db9, lockDB(t, pk), pk, now))
	if l == nil || l.Holder != holder || !l.Expected || !l.Until.IsZero() || l.TTL <= 29*time.Second {
		t.Fatalf("payment lock: %+v", l)
	}
}

func lockDB(t *testing.T, key string) int {
	for db := range 15 {
		if f, ok := eisland.Classify(db, key); ok && f.Role == schema.RoleLock {
			return db
		}
	}
	t.Fatalf("%q is no lock", key)
	return 0
}

// A sensitive family is never read: not even a command is sent.
func TestSensitiveNotDecoded(t *testing.T) {
	var c redis.Cmdable // nil: any command would panic
	m := schema.Match{Family: &schema.Family{ID: "x", Role: schema.RoleTokenBucket, Sensitive: true, Params: &schema.TokenBucketParams{Capacity: 1}}}
	r, err := decode.Decode(context.Background(), c, m, "k", time.Now())
	if err != nil || !r.Sensitive || r.Note != "sensitive: not decoded" || decode.As[decode.TokenBucket](r) != nil {
		t.Fatalf("sensitive: %+v %v", r, err)
	}
}

// A monthly quota against the pack's limit, reset at the next month in its
// zone; a balance as written, with its unit.
func TestQuotaAndBalance(t *testing.T) {
	rs := redistest.Start(t)
	ctx := context.Background()
	now := time.Date(2026, 12, 15, 12, 0, 0, 0, time.UTC) // the pack counts months at +08:00
	key := "qweather:quota:provider:qweather:202612"
	rs.Client(11).IncrBy(ctx, key, 12500)
	q := decode.As[decode.Quota](dec(t, rs.Client(11), 11, key, now))
	if q == nil || q.Used != 12500 || q.Limit != 50000 || q.Percent != 25 || q.Reached || q.Unit != "calls" ||
		!q.ResetsAt.Equal(time.Date(2026, 12, 31, 16, 0, 0, 0, time.UTC)) {
		t.Fatalf("quota: %+v", q)
	}
	rs.Client(11).Set(ctx, key, "50000", 0)
	if q = decode.As[decode.Quota](dec(t, rs.Client(11), 11, key, now)); !q.Reached {
		t.Fatalf("quota at its limit: %+v", q)
	}
	bk := "agent:balance:ada"
	rs.Client(12).Set(ctx, bk, "1250.50000000", 0)
	b := decode.As[decode.Balance](dec(t, rs.Client(12), 12, bk, now))
	if b == nil || b.Amount != "1250.50000000" || b.Unit != "fen" || b.Scale != 8 || b.TTL >= 0 {
		t.Fatalf("balance: %+v", b)
	}
	rs.Client(12).Set(ctx, bk, "NaN", 0)
	if r := dec(t, rs.Client(12), 12, bk, now); decode.As[decode.Balance](r) != nil || r.Note == "" {
		t.Fatalf("NaN balance: %+v", r)
	}
}
