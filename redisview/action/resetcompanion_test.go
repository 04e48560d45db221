package action

import (
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview/schema"
)

// A sliding window's companion lock whose value is not an unlock time (a
// pack's lock holding "1") still locks the user out while it exists: a
// reset of the window below its limit, with that lock set, is one that
// lets the user try again, and the preview's first line says so (as before
// the reset roles moved to a registry; it read plain "RESET LIMIT").
func TestResetLimitWindowWithAnOpaqueLock(t *testing.T) {
	f := setup(t, Options{})
	pack, err := schema.Load("opaque", []byte(`name: opaque
title: Opaque lock
families:
  - id: tries
    db: 2
    pattern: "tries:{user}"
    type: zset
    ttl: {max: 10m}
    domain: Sign-in
    role: sliding-window
    params:
      limit: 5
      window: 5m
      score_unit: ms
      lock: "locked:{user}"
      lock_for: 10m
    description: Failed tries.
  - id: tries-lock
    db: 2
    pattern: "locked:{user}"
    type: string
    ttl: {max: 10m}
    domain: Sign-in
    role: lock
    params:
      value: "1"
    description: The sign-in is locked while this exists.
`))
	if err != nil {
		t.Fatal(err)
	}
	f.conn.ForcePack(pack)
	now := time.Now()
	var zs []redis.Z
	for i := range 2 { // below the limit: the lock alone refuses the user
		ms := now.Add(time.Duration(i-2) * time.Second).UnixMilli()
		zs = append(zs, redis.Z{Score: float64(ms), Member: fmt.Sprint(ms)})
	}
	if err := f.db(2).ZAdd(f.ctx, "tries:ada", zs...).Err(); err != nil {
		t.Fatal(err)
	}
	f.db(2).Expire(f.ctx, "tries:ada", 10*time.Minute)
	f.db(2).Set(f.ctx, "locked:ada", "1", 10*time.Minute)
	// (The lock alone is no limit a reset applies to: its value is not an
	// unlock time.)
	pv, err := f.r.Preview(f.ctx, support, f.conn, "reset-limit", f.req(2, "tries:ada"))
	if err != nil {
		t.Fatal(err)
	}
	if len(pv.Changes) != 2 {
		t.Fatalf("changes %+v", pv.Changes)
	}
	mustContain(t, "first line", pv.Changes[0].Text, "RESET LIMIT so the user can try again immediately", "2 recorded, limit 5 per 5m")
	mustContain(t, "the lock's line", pv.Changes[1].Text, "and its lock", "tries-lock, lock: locked;")
}
