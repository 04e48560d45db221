package limits_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/demo"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/limits"
	"github.com/keydeck/keydeck/redisview/schema"
)

func openConn(t *testing.T, url string) *redisview.Conn {
	t.Helper()
	c, err := redisview.Open(redisview.ConnConfig{Name: "t", URL: url}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.ForcePack(schema.BuiltinPack("eisland"))
	return c
}

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// slider hits the eIsland slider bucket with the seed's own Lua n times.
func slider(t *testing.T, c *redis.Client, account string, capacity, n int) {
	t.Helper()
	key := "verify:slider:rate:create:account:" + b64(account)
	for range n {
		if err := demo.SliderTokenBucket.Run(context.Background(), c, []string{key}, time.Now().UnixMilli(), capacity,
			strconv.FormatFloat(float64(capacity)/60/1000, 'f', -1, 64), 1, 120).Err(); err != nil {
			t.Fatal(err)
		}
	}
}

func incrExpire(t *testing.T, c *redis.Client, key string, window, n int) {
	t.Helper()
	for range n {
		if err := demo.RateLimitIncrExpire.Run(context.Background(), c, []string{key}, window).Err(); err != nil {
			t.Fatal(err)
		}
	}
}

func failures(t *testing.T, c *redis.Client, user string, n int, lock bool) {
	t.Helper()
	ctx := context.Background()
	now := time.Now()
	key := "auth:limit:login:failures:" + user
	for i := range n {
		ms := now.Add(-time.Duration(n-i) * time.Second).UnixMilli()
		c.ZAdd(ctx, key, redis.Z{Score: float64(ms), Member: fmt.Sprintf("%d:%d", ms, i)})
	}
	c.Expire(ctx, key, 15*time.Minute)
	if lock {
		c.Set(ctx, "auth:limit:login:lock:"+user, strconv.FormatInt(now.Add(10*time.Minute).UnixMilli(), 10), 10*time.Minute)
	}
}

var fast = limits.Budget{KeysPerSec: 200000, Count: 100, Keep: 50, Refresh: 200 * time.Millisecond}

func family(t *testing.T, snap limits.Snapshot, id string, db int) limits.FamilySnap {
	t.Helper()
	for _, f := range snap.Families {
		if f.Family.ID == id && f.DB == db {
			return f
		}
	}
	t.Fatalf("no family %s in db%d", id, db)
	return limits.FamilySnap{}
}

func row(t *testing.T, f limits.FamilySnap, key string) limits.Row {
	t.Helper()
	for _, r := range f.Rows {
		if r.Key == key {
			return r
		}
	}
	t.Fatalf("%s: no row %q among %d", f.Family.ID, key, len(f.Rows))
	return limits.Row{}
}

// waitPass waits until every family was swept once and a refresh ran
// after (every kept row read again since).
func waitPass(t *testing.T, s *limits.Sweeper) limits.Snapshot {
	t.Helper()
	redistest.Eventually(t, 10*time.Second, "a complete pass", func() bool {
		snap := s.Snapshot()
		done := len(snap.Families) > 0
		for _, f := range snap.Families {
			done = done && f.Passes > 0
		}
		return done
	})
	since := time.Now()
	redistest.Eventually(t, 10*time.Second, "a refresh after the pass", func() bool {
		for _, f := range s.Snapshot().Families {
			for _, r := range f.Rows {
				if r.ReadAt.Before(since) {
					return false
				}
			}
		}
		return true
	})
	return s.Snapshot()
}

// State written by the seeds' own scripts is read back exactly: a slider
// bucket drained by 12 hits, a fixed window at its limit, a login window
// with its lock, a worker's lock and one without a TTL.
func TestSweepReadsSeedState(t *testing.T) {
	rs := redistest.Start(t)
	conn := openConn(t, rs.URL(0))
	slider(t, rs.Client(4), "alice@example.com", 12, 12)
	slider(t, rs.Client(4), "bob@example.com", 12, 3)
	incrExpire(t, rs.Client(4), "verify:slider:fail:account:"+b64("carol"), 600, 3)
	incrExpire(t, rs.Client(4), "verify:slider:fail:account:"+b64("dave"), 600, 1)
	failures(t, rs.Client(6), "eve", 5, true)
	failures(t, rs.Client(6), "frank", 2, false)
	const uuid = "5d0c8f5e-8a6b-4f43-9d3c-2f1f3c9b7e21"
	ctx := context.Background()
	if !rs.Client(10).SetNX(ctx, "payment:lock:create:pro-month:gina", uuid, 15*time.Second).Val() {
		t.Fatal("SET NX PX refused")
	}
	rs.Client(10).Set(ctx, "payment:lock:create:pro-month:hank", uuid, 0)

	pool := limits.NewPool(t.Context(), fast, time.Second)
	s, release := pool.Acquire(conn)
	defer release()
	snap := waitPass(t, s)
	for _, f := range snap.Families {
		if !f.Read {
			t.Fatalf("%s db%d: swept once, yet not marked read", f.Family.ID, f.DB)
		}
	}
	now := time.Now()

	buckets := family(t, snap, "slider-rate-create-account", 4)
	alice := row(t, buckets, "verify:slider:rate:create:account:"+b64("alice@example.com"))
	bob := row(t, buckets, "verify:slider:rate:create:account:"+b64("bob@example.com"))
	if v, ok := (schema.Match{Vars: alice.Vars}).Get("account"); !ok || v != "alice@example.com" {
		t.Fatalf("account decoded as %q", v)
	}
	// 12 per minute refill 0.2 a second: within a few seconds of the test.
	bucket := func(r limits.Row) decode.BucketRow {
		b, ok := r.State.(decode.BucketRow)
		if !ok {
			t.Fatalf("%s: state %#v (err %q), not a bucket's", r.Key, r.State, r.Err)
		}
		return b
	}
	el := func(r limits.Row) float64 {
		return float64(now.Sub(time.UnixMilli(int64(bucket(r).LastMs))).Milliseconds()) * 12.0 / 60000
	}
	// The script leaves what it refilled between hits (a few ms' worth).
	if bucket(alice).Stored > 0.1 || bucket(bob).Stored < 9 || bucket(bob).Stored > 9.1 {
		t.Fatalf("stored tokens: alice %v, bob %v", bucket(alice).Stored, bucket(bob).Stored)
	}
	if st := alice.At(now); !st.Throttled || math.Abs(st.Tokens-(bucket(alice).Stored+el(alice))) > 1e-9 || st.Limit != 12 {
		t.Fatalf("alice: %+v (stored %v)", st, bucket(alice).Stored)
	}
	if st := bob.At(now); st.Throttled || math.Abs(st.Tokens-(bucket(bob).Stored+el(bob))) > 1e-9 {
		t.Fatalf("bob: %+v", st)
	}
	// Live: a minute later both are full again, without a read.
	if st := alice.At(now.Add(time.Minute)); st.Tokens != 12 || st.Throttled {
		t.Fatalf("alice a minute later: %+v", st)
	}
	rows := append([]limits.Row(nil), buckets.Rows...)
	limits.Sort(rows, now)
	if rows[0].Key != alice.Key {
		t.Fatalf("throttled row not first: %q", rows[0].Key)
	}

	fails := family(t, snap, "slider-fail-account", 4)
	carol := row(t, fails, "verify:slider:fail:account:"+b64("carol"))
	if st := carol.At(now); !st.Throttled || st.Used != 3 || st.Limit != 3 || st.ResetsIn <= 590*time.Second || st.ResetsIn > 600*time.Second {
		t.Fatalf("carol: %+v", st)
	}
	if st := row(t, fails, "verify:slider:fail:account:"+b64("dave")).At(now); st.Throttled || st.Used != 1 {
		t.Fatalf("dave: %+v", st)
	}

	logins := family(t, snap, "login-failures", 6)
	eve := row(t, logins, "auth:limit:login:failures:eve")
	if st := eve.At(now); !st.Locked || !st.Throttled || st.Used != 5 || st.Until.IsZero() || st.Until.Sub(now) < 9*time.Minute {
		t.Fatalf("eve: %+v", st)
	}
	if sw, _ := eve.State.(decode.SlidingRow); sw.LockKey != "auth:limit:login:lock:eve" {
		t.Fatalf("lock key %q", sw.LockKey)
	}
	if st := row(t, logins, "auth:limit:login:failures:frank").At(now); st.Locked || st.Throttled || st.Used != 2 {
		t.Fatalf("frank: %+v", st)
	}

	locks := family(t, snap, "lock-create-pro-month", 10)
	gina := row(t, locks, "payment:lock:create:pro-month:gina")
	if st := gina.At(now); st.Holder != uuid || st.NoTTL || st.TTL <= 0 || st.TTL > 15*time.Second || st.Age < 0 || st.Age > 2*time.Second {
		t.Fatalf("gina: %+v", st)
	}
	hank := row(t, locks, "payment:lock:create:pro-month:hank")
	if st := hank.At(now); !st.NoTTL {
		t.Fatalf("hank: %+v", st)
	}
	lrows := append([]limits.Row(nil), locks.Rows...)
	limits.Sort(lrows, now)
	if lrows[0].Key != hank.Key {
		t.Fatal("the lock without a TTL is not first")
	}

	// Released: gone from the rows within a refresh.
	rs.Client(10).Del(ctx, gina.Key)
	redistest.Eventually(t, 10*time.Second, "the released lock gone from the rows", func() bool {
		for _, r := range family(t, s.Snapshot(), "lock-create-pro-month", 10).Rows {
			if r.Key == gina.Key {
				return false
			}
		}
		return true
	})
}

// A family with more keys than Keep keeps its most constrained rows, and
// the sweep reads each key with a bounded number of commands.
func TestSweepIsBounded(t *testing.T) {
	rs := redistest.Start(t)
	conn := openConn(t, rs.URL(0))
	ctx := context.Background()
	c := rs.Client(4)
	const n = 1000
	pipe := c.Pipeline()
	now := time.Now().UnixMilli()
	for i := range n {
		// i tokens taken of 60: the most taken are the most constrained.
		key := "verify:slider:rate:verify:ip:" + b64(fmt.Sprintf("10.0.%d.%d", i/256, i%256))
		pipe.HSet(ctx, key, "tokens", strconv.Itoa(60-i%61), "ts", strconv.FormatInt(now, 10))
		pipe.Expire(ctx, key, 2*time.Minute)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	before, err := rs.CommandCalls(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b := fast
	b.Keep = 10
	b.Refresh = time.Hour // no re-reads: count the pass alone
	pool := limits.NewPool(t.Context(), b, time.Millisecond)
	s, release := pool.Acquire(conn)
	var f limits.FamilySnap
	redistest.Eventually(t, 10*time.Second, "a pass over slider-rate-verify-ip", func() bool {
		f = family(t, s.Snapshot(), "slider-rate-verify-ip", 4)
		return f.Passes > 0
	})
	if f.Total != n || len(f.Rows) != 10 {
		t.Fatalf("total %d, rows %d", f.Total, len(f.Rows))
	}
	for _, r := range f.Rows {
		// At the time they were written (a refill since depends on how slow
		// the machine is): the ten with 0 or 1 token left.
		if st := r.At(time.UnixMilli(now)); st.Tokens > 1 {
			t.Fatalf("kept %q with %v tokens", r.Key, st.Tokens)
		}
	}
	release()
	redistest.Eventually(t, 10*time.Second, "the sweeper stopped", func() bool { return pool.Running() == 0 })
	after, _ := rs.CommandCalls(ctx)
	if got := after["hmget"] - before["hmget"]; got < n || got > 2*n {
		t.Fatalf("%d HMGET for %d buckets", got, n)
	}
	for _, cmd := range []string{"keys", "hgetall", "zrange", "get", "smembers"} {
		if after[cmd] != before[cmd] {
			t.Errorf("the sweep sent %s", cmd)
		}
	}
	if scans := after["scan"] - before["scan"]; scans > 4*int64(n/b.Count+2)*int64(len(s.Snapshot().Families)) {
		t.Errorf("%d SCANs", scans)
	}
}

func TestRowAt(t *testing.T) {
	p := schema.BuiltinPack("eisland")
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	bucket := limits.Row{Family: p.Family("slider-rate-create-account"), ReadAt: t0, PTTL: 2 * time.Minute, State: decode.BucketRow{Stored: 0, LastMs: float64(t0.UnixMilli()), HasLast: true}}
	window := limits.Row{Family: p.Family("totp-fail"), ReadAt: t0, PTTL: 10 * time.Second, State: decode.WindowRow{Count: 5}}
	lock := limits.Row{Family: p.Family("order-op-lock"), ReadAt: t0, PTTL: 10 * time.Second, State: decode.HeldRow{Holder: "x"}}
	for _, c := range []struct {
		name      string
		r         limits.Row
		at        time.Duration
		used      float64
		throttled bool
		gone      bool
	}{
		{"bucket empty", bucket, 0, 12, true, false},
		{"bucket after 2.5s: half a token", bucket, 2500 * time.Millisecond, 11.5, true, false},
		{"bucket after 5s: one token", bucket, 5 * time.Second, 11, false, false},
		{"bucket after a minute: full", bucket, time.Minute, 0, false, false},
		{"window at its limit", window, time.Second, 5, true, false},
		{"window expired", window, 11 * time.Second, 0, false, true},
	} {
		st := c.r.At(t0.Add(c.at))
		if math.Abs(st.Used-c.used) > 1e-9 || st.Throttled != c.throttled || st.Gone != c.gone {
			t.Errorf("%s: %+v", c.name, st)
		}
	}
	if st := lock.At(t0.Add(4 * time.Second)); st.TTL != 6*time.Second || st.Age != 9*time.Second {
		t.Errorf("lock: TTL %v age %v (pack TTL 15s, read at 10s left)", st.TTL, st.Age)
	}
}

func TestRowMatches(t *testing.T) {
	r := limits.Row{Vars: []schema.Var{{Name: "account", Raw: b64("Alice@Example.com"), Value: "Alice@Example.com", Decoded: true}}}
	for q, want := range map[string]bool{"": true, "alice": true, "EXAMPLE.COM": true, b64("Alice@Example.com")[:6]: true, "bob": false} {
		if r.Matches(q) != want {
			t.Errorf("Matches(%q) = %v", q, !want)
		}
	}
}

// With keyspace notifications on, a lock taken and released between two
// reads is still counted; without them the snapshot says why not.
func TestShortLocksCounted(t *testing.T) {
	for _, c := range []struct {
		events string
		on     bool
	}{{"KA", true}, {"", false}} {
		rs := redistest.Start(t, "--notify-keyspace-events", c.events)
		conn := openConn(t, rs.URL(0))
		pool := limits.NewPool(t.Context(), fast, time.Second)
		s, release := pool.Acquire(conn)
		waitPass(t, s)
		if k := s.Snapshot().Keyspace; k.On != c.on || (!c.on && k.Why == "") {
			t.Fatalf("events %q: keyspace %+v", c.events, k)
		}
		if !c.on {
			release()
			continue
		}
		redistest.Eventually(t, 10*time.Second, "the keyspace subscription", func() bool { return conn.Keyspace().Subscribed })
		ctx := context.Background()
		for i := range 3 {
			key := fmt.Sprintf("payment:order:op-lock:EI%d", i)
			// In one transaction: no sweep can read it in between.
			if _, err := rs.Client(10).TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.SetNX(ctx, key, "5d0c8f5e-8a6b-4f43-9d3c-2f1f3c9b7e21", 15*time.Second)
				p.Del(ctx, key)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		}
		redistest.Eventually(t, 10*time.Second, "3 short locks counted", func() bool { return s.Snapshot().Keyspace.ShortLocks >= 3 })
		if n := s.Snapshot().Keyspace.ShortLocks; n != 3 {
			t.Fatalf("%d short locks counted, want 3", n)
		}
		release()
	}
}

// Bucket4j states written by the demo's seeder (genuine 8.19 bytes) are
// decoded at every At, refilled to that moment.
func TestSweepReadsBucket4j(t *testing.T) {
	rs := redistest.Start(t)
	ctx := context.Background()
	if err := demo.SeedVertique(ctx, rs.Client(0), time.Now(), demo.DemoSecret); err != nil {
		t.Fatal(err)
	}
	c, err := redisview.Open(redisview.ConnConfig{Name: "v", URL: rs.URL(0)}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.ForcePack(schema.BuiltinPack("vertique"))
	pool := limits.NewPool(t.Context(), fast, time.Second)
	s, release := pool.Acquire(c)
	defer release()
	snap := waitPass(t, s)
	var f limits.FamilySnap
	for _, x := range snap.Families {
		if x.Family.Role == schema.RoleBucket4j {
			f = x
		}
	}
	if len(f.Rows) == 0 {
		t.Fatal("no Bucket4j row")
	}
	now := time.Now()
	for _, r := range f.Rows {
		raw, err := rs.Client(0).Get(ctx, r.Key).Bytes()
		if err != nil {
			continue // expired since
		}
		want, err := decode.DecodeBucket4j(raw, now)
		if err != nil {
			t.Fatalf("%s: %v", r.Key, err)
		}
		st := r.At(now)
		if r.Err != "" || st.Tokens != float64(want.Tokens) || st.Throttled != (want.Tokens < 1) || st.Limit <= 0 {
			t.Fatalf("%s: row %+v (err %q), decoded %d tokens", r.Key, st, r.Err, want.Tokens)
		}
	}
}

// A rate-limit family marked sensitive is listed, its value never read.
func TestSensitiveLimitNotRead(t *testing.T) {
	pack, err := schema.Load("secret.yaml", []byte(`name: secret
title: Secret
families:
  - id: secret-window
    db: 0
    pattern: "sec:rate:{user}"
    type: string
    ttl: {max: 1h}
    domain: Secret
    role: counter-window
    sensitive: true
    params: {limit: 3, window: 1h}
    description: A counter whose value must not be shown.
`))
	if err != nil {
		t.Fatal(err)
	}
	rs := redistest.Start(t)
	c, err := redisview.Open(redisview.ConnConfig{Name: "s", URL: rs.URL(0)}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.ForcePack(pack)
	incrExpire(t, rs.Client(0), "sec:rate:zoe", 3600, 3)
	before, _ := rs.CommandCalls(context.Background())
	pool := limits.NewPool(t.Context(), fast, time.Second)
	s, release := pool.Acquire(c)
	defer release()
	f := family(t, waitPass(t, s), "secret-window", 0)
	if len(f.Rows) != 1 || f.Rows[0].Err == "" || f.Rows[0].State != nil || f.Rows[0].At(time.Now()).Used != 0 {
		t.Fatalf("rows %+v", f.Rows)
	}
	after, _ := rs.CommandCalls(context.Background())
	if after["getrange"] != before["getrange"] || after["get"] != before["get"] {
		t.Fatal("a sensitive value was read")
	}
}

// A lock whose TTL exceeds its family's maximum (SET … 15m on a 15 s
// lock) is a violation like one without a TTL: flagged and listed first,
// its age not made up from a TTL it was not taken with.
func TestLockTTLAboveItsMaximum(t *testing.T) {
	rs := redistest.Start(t)
	conn := openConn(t, rs.URL(0))
	ctx := context.Background()
	const uuid = "5d0c8f5e-8a6b-4f43-9d3c-2f1f3c9b7e21"
	rs.Client(10).Set(ctx, "payment:lock:create:pro-month:gina", uuid, 10*time.Second)
	rs.Client(10).Set(ctx, "payment:lock:create:pro-month:ivan", uuid, 15*time.Minute)

	pool := limits.NewPool(t.Context(), fast, time.Second)
	s, release := pool.Acquire(conn)
	defer release()
	snap := waitPass(t, s)
	now := time.Now()
	locks := family(t, snap, "lock-create-pro-month", 10)
	if locks.Family.TTL.Max != 15*time.Second {
		t.Fatalf("the pack's maximum is %v, not 15s", locks.Family.TTL.Max)
	}
	ivan := row(t, locks, "payment:lock:create:pro-month:ivan").At(now)
	if !ivan.OverMax || ivan.NoTTL || ivan.TTL <= 14*time.Minute || ivan.Age != 0 {
		t.Fatalf("ivan: %+v", ivan)
	}
	if v := locks.Family.TTL.Violation(ivan.TTL); v.Fault != schema.TTLAboveMax || v.Bound != 15*time.Second {
		t.Fatalf("ivan's violation %+v", v)
	}
	gina := row(t, locks, "payment:lock:create:pro-month:gina").At(now)
	if gina.OverMax || locks.Family.TTL.Violation(gina.TTL).Broken() {
		t.Fatalf("gina: %+v", gina)
	}
	rows := append([]limits.Row(nil), locks.Rows...)
	limits.Sort(rows, now)
	if rows[0].Key != "payment:lock:create:pro-month:ivan" {
		t.Fatalf("the lock above its maximum TTL is not first: %q", rows[0].Key)
	}
}

// Notifications turned on at runtime start the short-lock count within
// 2 s, not at the next 30 s check.
func TestShortLocksCountedOnceTurnedOn(t *testing.T) {
	rs := redistest.Start(t)
	conn := openConn(t, rs.URL(0))
	pool := limits.NewPool(t.Context(), fast, time.Second)
	s, release := pool.Acquire(conn)
	defer release()
	waitPass(t, s)
	if k := s.Snapshot().Keyspace; k.On {
		t.Fatalf("on before CONFIG SET: %+v", k)
	}
	ctx := context.Background()
	if err := rs.Client(0).ConfigSet(ctx, "notify-keyspace-events", "KA").Err(); err != nil {
		t.Fatal(err)
	}
	redistest.Eventually(t, 2*time.Second, "counting after CONFIG SET", func() bool { return s.Snapshot().Keyspace.On })
}
