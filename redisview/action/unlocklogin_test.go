package action

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/demo"
	"github.com/keydeck/keydeck/redisview/schema"
)

// Unlock login deletes the lock and the failure window in one transaction,
// from either key, is recorded under its own name, and admin undoes it.
func TestUnlockLoginRoundTrip(t *testing.T) {
	f := eisland(t)
	const (
		window = "auth:limit:login:failures:bob_chen"
		lock   = "auth:limit:login:lock:bob_chen"
	)
	now := time.Now()
	seedLogin := func() map[string]snap {
		t.Helper()
		f.db(6).Del(f.ctx, window, lock)
		var zs []redis.Z
		for i := range 5 {
			ms := now.Add(time.Duration(i-5) * time.Second).UnixMilli()
			zs = append(zs, redis.Z{Score: float64(ms), Member: fmt.Sprintf("%d:%d", ms, 77+i)})
		}
		f.db(6).ZAdd(f.ctx, window, zs...)
		f.db(6).Expire(f.ctx, window, 15*time.Minute)
		f.db(6).Set(f.ctx, lock, strconv.FormatInt(now.Add(10*time.Minute).UnixMilli(), 10), 10*time.Minute)
		return map[string]snap{window: f.snap(6, window), lock: f.snap(6, lock)}
	}
	for _, from := range []string{window, lock} {
		before := seedLogin()
		pv, err := f.r.Preview(f.ctx, support, f.conn, KindUnlockLogin, f.req(6, from))
		if err != nil {
			t.Fatal(err)
		}
		if pv.Title != "Unlock login" || len(pv.Changes) != 2 || pv.Changes[0].Op != "delete" || pv.Changes[1].Op != "delete" {
			t.Fatalf("from %s: preview %+v", from, pv)
		}
		mustContain(t, "summary", pv.Summary, "try again immediately", quoteKey(window), quoteKey(lock))
		if _, err := f.r.Execute(f.ctx, support, f.conn, pv); err != nil {
			t.Fatal(err)
		}
		if n := f.db(6).Exists(f.ctx, window, lock).Val(); n != 0 {
			t.Fatalf("from %s: %d of the two keys left", from, n)
		}
		if rec := f.last(); rec.Action != KindUnlockLogin || len(rec.Keys) != 2 {
			t.Fatalf("audit %+v", rec)
		}
		f.undoAndCheck(6, before)
	}
	// A lock taken again between preview and confirm refuses the action.
	seedLogin()
	f.db(6).Del(f.ctx, lock)
	pv, err := f.r.Preview(f.ctx, support, f.conn, KindUnlockLogin, f.req(6, window))
	if err != nil {
		t.Fatal(err)
	}
	f.db(6).Set(f.ctx, lock, "1", time.Minute)
	_, err = f.r.Execute(f.ctx, support, f.conn, pv)
	wantErr(t, err, ErrChanged, "")
	if f.db(6).Exists(f.ctx, window, lock).Val() != 2 {
		t.Fatal("touched although the lock changed")
	}
}

func TestUnlockLoginAppliesTo(t *testing.T) {
	p := schema.BuiltinPack("eisland")
	for id, want := range map[string]bool{
		"login-failures":      true,  // sliding window with a lock
		"login-lock":          true,  // the lock holding its unlock time
		"register-attempts":   false, // sliding window without a lock
		"order-op-lock":       false, // a worker's lock
		"slider-fail-account": false,
	} {
		if got := (UnlockLogin{}).AppliesTo(p.Family(id)); got != want {
			t.Errorf("%s: AppliesTo = %v, want %v", id, got, want)
		}
	}
	f := eisland(t)
	f.db(10).Set(f.ctx, "payment:order:op-lock:EI1", "5d0c8f5e-8a6b-4f43-9d3c-2f1f3c9b7e21", 15*time.Second)
	_, err := f.r.Preview(f.ctx, support, f.conn, KindUnlockLogin, f.req(10, "payment:order:op-lock:EI1"))
	wantErr(t, err, ErrInvalid, "applies only to")
}

// Clear failures finds failure counters by their params (counts: failures),
// clears one with a preview of its count, and admin undoes it.
func TestClearFailures(t *testing.T) {
	p := schema.BuiltinPack("eisland")
	for id, want := range map[string]bool{
		"slider-fail-account": true,
		"slider-fail-ip":      true,
		"totp-fail":           true,
		"verify-attempts":     true,  // role counter
		"totp-rate-user":      false, // counts requests
		"verify-rate-ip":      false,
		"login-failures":      false, // a sliding window: Unlock login
	} {
		if got := (ClearFailures{}).AppliesTo(p.Family(id)); got != want {
			t.Errorf("%s: AppliesTo = %v, want %v", id, got, want)
		}
	}
	f := eisland(t)
	const key = "totp:security:fail:alice"
	for range 5 {
		f.db(5).Incr(f.ctx, key)
	}
	f.db(5).Expire(f.ctx, key, 10*time.Minute)
	before := map[string]snap{key: f.snap(5, key)}
	pv, err := f.r.Preview(f.ctx, support, f.conn, KindClearFailures, f.req(5, key))
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "summary", pv.Summary, "try again immediately", "totp-fail", "count 5, limit 5 per 10m (reached)")
	if _, err := f.r.Execute(f.ctx, support, f.conn, pv); err != nil {
		t.Fatal(err)
	}
	if f.db(5).Exists(f.ctx, key).Val() != 0 {
		t.Fatal("failures not cleared")
	}
	if rec := f.last(); rec.Action != KindClearFailures {
		t.Fatalf("audit %+v", rec)
	}
	f.undoAndCheck(5, before)
	_, err = f.r.Preview(f.ctx, support, f.conn, KindClearFailures, f.req(5, "totp:security:rate:user:alice"))
	wantErr(t, err, ErrInvalid, "applies only to")
}

// A Bucket4j bucket is reset by deleting it, and undo restores its exact
// bytes.
func TestResetLimitBucket4j(t *testing.T) {
	f := setup(t, Options{})
	f.conn.ForcePack(schema.BuiltinPack("vertique"))
	if err := demo.SeedVertique(f.ctx, f.db(0), time.Now(), demo.DemoSecret); err != nil {
		t.Fatal(err)
	}
	keys, _, err := f.db(0).Scan(f.ctx, 0, "*:v1:*", 1000).Result()
	if err != nil || len(keys) == 0 {
		t.Fatalf("no vertique bucket (%v)", err)
	}
	key := keys[0]
	before := map[string]snap{key: f.snap(0, key)}
	pv, err := f.r.Preview(f.ctx, support, f.conn, KindResetLimit, f.req(0, key))
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "summary", pv.Summary, "RESET LIMIT", "bucket4j", "the next request starts a new one with its bandwidths' initial tokens")
	if _, err := f.r.Execute(f.ctx, support, f.conn, pv); err != nil {
		t.Fatal(err)
	}
	if f.db(0).Exists(f.ctx, key).Val() != 0 {
		t.Fatal("bucket not reset")
	}
	f.undoAndCheck(0, before)
}
