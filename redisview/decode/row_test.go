package decode_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/schema"
)

// Every family the registry classes a limit or a lock (in every built-in
// pack) has a row reader; the rows of all of them are read in one round
// trip; and a sensitive family's row is its TTL alone: no value is read,
// a lock is still held (its TTL runs), a limit says it was not read.
func TestReadRowsEveryLimitAndLockRole(t *testing.T) {
	rs := redistest.Start(t)
	ctx := context.Background()
	var items []decode.Item
	for _, p := range schema.Builtin() {
		for _, f := range p.Families {
			c := decode.ClassOf(f)
			if c != decode.ClassLimit && c != decode.ClassLock {
				continue
			}
			sf := *f
			sf.Sensitive = true
			key := "row:" + strconv.Itoa(len(items))
			rs.Client(0).Set(ctx, key, "1", time.Minute)
			items = append(items, decode.Item{Match: schema.Match{Family: &sf}, Key: key})
		}
	}
	if len(items) == 0 {
		t.Fatal("no limit or lock family in the built-in packs")
	}
	before, err := rs.CommandCalls(ctx)
	if err != nil {
		t.Fatal(err)
	}
	h := &tripHook{}
	c := redis.NewClient(&redis.Options{Addr: rs.Addr})
	defer c.Close()
	c.AddHook(h)
	c.Ping(ctx)
	h.n = 0
	now := time.Now()
	rows, err := decode.ReadRows(ctx, c, 0, items, now)
	if err != nil || h.n != 1 {
		t.Fatalf("%d rows: %d round trips, err %v", len(items), h.n, err)
	}
	after, _ := rs.CommandCalls(ctx)
	for _, cmd := range []string{"get", "getrange", "hmget", "zcount", "zcard", "strlen"} {
		if after[cmd] != before[cmd] {
			t.Errorf("a sensitive row sent %s", cmd)
		}
	}
	for i, r := range rows {
		f := items[i].Match.Family
		if strings.Contains(r.Err, "no row reader") || r.PTTL <= 0 {
			t.Errorf("%s (%s): %+v", f.ID, f.Role, r)
			continue
		}
		s := decode.Since{Family: f, ReadAt: now, PTTL: r.PTTL, Now: now.Add(time.Second)}
		switch decode.ClassOf(f) {
		case decode.ClassLimit:
			if r.State != nil || r.Err != "sensitive: the value is not read" {
				t.Errorf("sensitive limit %s (%s): %+v", f.ID, f.Role, r)
			}
		case decode.ClassLock:
			if m := r.State.At(s); r.Err != "" || !m.Locked || m.Holder != "" || m.TTL <= 0 || m.TTL >= time.Minute {
				t.Errorf("sensitive lock %s (%s): %+v, at: %+v", f.ID, f.Role, r, m)
			}
		}
	}
}

// A row whose key is gone between the SCAN and the read has PTTL -2 and
// no state; one of the wrong type says the server's refusal.
func TestReadRowsGoneAndWrongType(t *testing.T) {
	db := redistest.Start(t).Client(0)
	ctx := context.Background()
	win := &schema.Family{ID: "w", Role: schema.RoleCounterWindow, Params: &schema.CounterWindowParams{Limit: 3, Window: time.Minute}}
	db.HSet(ctx, "hash", "a", "1")
	rows, err := decode.ReadRows(ctx, db, 0, []decode.Item{{Match: schema.Match{Family: win}, Key: "gone"}, {Match: schema.Match{Family: win}, Key: "hash"}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if rows[0].PTTL != -2 || rows[0].State != nil || rows[0].Err != "" {
		t.Errorf("gone: %+v", rows[0])
	}
	if rows[1].PTTL != -1 || rows[1].State != nil || !strings.HasPrefix(rows[1].Err, "WRONGTYPE") {
		t.Errorf("wrong type: %+v", rows[1])
	}
}
