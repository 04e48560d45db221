package decode_test

import (
	"context"
	"io"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/demo"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/schema"
)

var gatewayPack = schema.BuiltinPack("gateway")

func gwDec(t *testing.T, c redis.Cmdable, key string, env decode.Env) decode.Result {
	t.Helper()
	m, ok := gatewayPack.Classifier().Match(0, key)
	if !ok {
		t.Fatalf("%q is not a gateway key", key)
	}
	r, err := decode.DecodeIn(context.Background(), c, env, m, key, time.Now())
	if err != nil {
		t.Fatalf("decode %q: %v", key, err)
	}
	return r
}

// A reservation written as gateway-quota writes it at dispatch time (SET
// with the 5-minute TTL): its amount in the pack's unit, TTL left and an
// age counted from the pack's TTL; one written without a TTL is flagged.
func TestReservation(t *testing.T) {
	db := redistest.Start(t).Client(0)
	ctx := context.Background()
	db.Set(ctx, "q:reserved:req_a", 8192, 5*time.Minute)
	db.PExpire(ctx, "q:reserved:req_a", 200*time.Second) // as if written 100 s ago
	r := decode.As[decode.Reservation](gwDec(t, db, "q:reserved:req_a", decode.Env{}))
	if r == nil || r.Amount != "8192" || r.Unit != "tokens" || r.NoTTL || r.TTL <= 199*time.Second || r.TTL > 200*time.Second ||
		r.MaxTTL != 5*time.Minute || r.Age < 100*time.Second || r.Age > 101*time.Second {
		t.Fatalf("reservation: %+v", r)
	}
	db.Set(ctx, "q:reserved:req_b", 512, 0)
	if r = decode.As[decode.Reservation](gwDec(t, db, "q:reserved:req_b", decode.Env{})); r == nil || !r.NoTTL || r.Age != 0 || r.MaxTTL != 0 {
		t.Fatalf("reservation without TTL: %+v", r)
	}
	db.Set(ctx, "q:reserved:req_c", "lots", time.Minute)
	if res := gwDec(t, db, "q:reserved:req_c", decode.Env{}); decode.As[decode.Reservation](res) != nil || res.Note == "" {
		t.Fatalf("not an amount: %+v", res)
	}
}

// A concurrency set as gateway-quota keeps it (SADD on start, EXPIRE; the
// reservation SET beside it): the in-flight count, no cap in the pack, and
// each member linked to q:reserved:{member} through the pack, byte-exact;
// a member whose reservation is gone is not reserved. Without the pack no
// link is claimed.
func TestConcurrencySetLinksReservations(t *testing.T) {
	db := redistest.Start(t).Client(0)
	ctx := context.Background()
	odd := "req_\xff<b>\"x\""
	for _, id := range []string{"req_1", "req_2", odd} {
		db.Set(ctx, "q:reserved:"+id, 1024, 5*time.Minute)
		db.SAdd(ctx, "q:conc:k1", id)
		db.Expire(ctx, "q:conc:k1", 5*time.Minute)
	}
	db.SAdd(ctx, "q:conc:k1", "req_crashed") // its reservation expired
	long := strings.Repeat("r", decode.MaxCheckedID+1)
	db.Set(ctx, "q:reserved:"+long, 1, time.Minute)
	db.SAdd(ctx, "q:conc:k1", long)
	cs := decode.As[decode.ConcurrencySet](gwDec(t, db, "q:conc:k1", decode.Env{Pack: gatewayPack}))
	if cs == nil || cs.InFlight != 5 || cs.Limit != 0 || cs.More || len(cs.Members) != 5 || cs.ReservationFamily != "reservation" || cs.TTL <= 0 {
		t.Fatalf("set: %+v", cs)
	}
	for _, mb := range cs.Members {
		if mb.ID == long {
			if !mb.TooLong || mb.Reservation != "" || mb.Reserved {
				t.Fatalf("an id over 4 KiB is looked up: too long %v, key built %v", mb.TooLong, mb.Reservation != "")
			}
			continue
		}
		if mb.Reservation != "q:reserved:"+mb.ID {
			t.Fatalf("member %q links %q", mb.ID, mb.Reservation)
		}
		if want := mb.ID != "req_crashed"; mb.Reserved != want {
			t.Fatalf("member %q reserved %v, want %v", mb.ID, mb.Reserved, want)
		}
	}
	if cs = decode.As[decode.ConcurrencySet](gwDec(t, db, "q:conc:k1", decode.Env{})); cs.ReservationFamily != "" || cs.Members[0].Reservation != "" || cs.Members[0].Reserved {
		t.Fatalf("without the pack: %+v", cs)
	}
	// A big set: one page of at most 100, and it says there are more.
	for i := range 300 {
		db.SAdd(ctx, "q:conc:k2", "req_"+strconv.Itoa(i))
	}
	cs = decode.As[decode.ConcurrencySet](gwDec(t, db, "q:conc:k2", decode.Env{Pack: gatewayPack}))
	if cs.InFlight != 300 || len(cs.Members) == 0 || len(cs.Members) > decode.MaxMembers || !cs.More || cs.TTL >= 0 {
		t.Fatalf("big set: %d in flight, %d read, more %v", cs.InFlight, len(cs.Members), cs.More)
	}
}

// The breaker hint the router writes on a local OPEN transition.
func TestBreakerHint(t *testing.T) {
	db := redistest.Start(t).Client(0)
	db.Set(context.Background(), "cb:hint:openai:gpt-4o", "open", 30*time.Second)
	h := decode.As[decode.BreakerHint](gwDec(t, db, "cb:hint:openai:gpt-4o", decode.Env{}))
	if h == nil || !h.Open || h.State != "open" || h.TTL <= 0 || h.TTL > 30*time.Second {
		t.Fatalf("hint: %+v", h)
	}
	db.Set(context.Background(), "cb:hint:openai:gpt-4o", "half", 0)
	if h = decode.As[decode.BreakerHint](gwDec(t, db, "cb:hint:openai:gpt-4o", decode.Env{})); h.Open || h.State != "half" || h.TTL >= 0 {
		t.Fatalf("other marker: %+v", h)
	}
}

// The mini-game leaderboard as the seed writes it (ZADD member=userId,
// score=high score): its size and the highest entry.
func TestLeaderboard(t *testing.T) {
	db := redistest.Start(t).Client(14)
	ctx := context.Background()
	db.ZAdd(ctx, "mg:score:leaderboard:g2048", redis.Z{Score: 1200, Member: "u1"}, redis.Z{Score: 9000, Member: "u2"}, redis.Z{Score: 40, Member: "u3"})
	lb := decode.As[decode.Leaderboard](dec(t, db, 14, "mg:score:leaderboard:g2048", time.Now()))
	if lb == nil || lb.Card != 3 || !lb.HasTop || lb.Top != "u2" || lb.TopScore != 9000 || lb.Retained != 200 {
		t.Fatalf("leaderboard: %+v", lb)
	}
	db.Del(ctx, "mg:score:leaderboard:g2048")
	if lb = decode.As[decode.Leaderboard](dec(t, db, 14, "mg:score:leaderboard:g2048", time.Now())); lb == nil || lb.Card != 0 || lb.HasTop {
		t.Fatalf("empty: %+v", lb)
	}
}

// bloomAdd adds items as the application does: SETBIT at each of the six
// positions of the pinned scheme, and SADD to the exact set.
func bloomAdd(t *testing.T, db redis.Cmdable, bloom, set string, bits int64, items ...string) map[int64]bool {
	t.Helper()
	ctx := context.Background()
	pos := map[int64]bool{}
	for _, it := range items {
		for _, p := range redisview.BloomPositions(it, bits, 6) {
			if err := db.SetBit(ctx, bloom, p, 1).Err(); err != nil {
				t.Fatal(err)
			}
			pos[p] = true
		}
		db.SAdd(ctx, set, it)
	}
	return pos
}

// A bloom's set bits are the distinct positions of the items added; fill
// and false-positive rate follow from the pack's bits and hashes; the
// exact set is counted. Counted across chunk boundaries too.
func TestBloom(t *testing.T) {
	db := redistest.Start(t).Client(9)
	items := []string{"mallory", "trudy", "eve", "用户", "x\xffy"}
	pos := bloomAdd(t, db, "user:ban:bloom", "user:ban:set", 1000003, items...)
	for _, chunk := range []int64{512 << 10, 1000, 7} {
		old := decode.SetBitcountChunk(chunk)
		b := decode.As[decode.Bloom](dec(t, db, 9, "user:ban:bloom", time.Now()))
		decode.SetBitcountChunk(old)
		fill := float64(len(pos)) / 1000003
		if b == nil || !b.Counted || b.SetBits != int64(len(pos)) || b.Configured != 1000003 || b.Hashes != 6 ||
			b.Fill != fill || math.Abs(b.FalsePositive-math.Pow(fill, 6)) > 1e-30 ||
			b.MembersKey != "user:ban:set" || !b.HasMembers || b.Members != int64(len(items)) {
			t.Fatalf("chunk %d: %+v (want %d set bits)", chunk, b, len(pos))
		}
		if b.Bytes > 1000003/8+1 || b.Bits != b.Bytes*8 {
			t.Fatalf("length: %+v", b)
		}
	}
}

// A send cooldown ("1", 60 s) ends at now + its TTL; a verification
// attempts counter (INCR, TTL of the code) counts against the pack's 5.
func TestCooldownAndCounter(t *testing.T) {
	db := redistest.Start(t).Client(2)
	ctx := context.Background()
	now := time.Now()
	db.Set(ctx, "verify:cooldown:REGISTER:a@b.c", "1", time.Minute)
	cd := decode.As[decode.Cooldown](dec(t, db, 2, "verify:cooldown:REGISTER:a@b.c", now))
	if cd == nil || cd.TTL <= 0 || cd.TTL > time.Minute || !cd.Ends.Equal(now.Add(cd.TTL).UTC()) {
		t.Fatalf("cooldown: %+v", cd)
	}
	if r := dec(t, db, 2, "verify:cooldown:REGISTER:gone@b.c", now); decode.As[decode.Cooldown](r) != nil || r.Note != "the key is gone" {
		t.Fatalf("absent cooldown: %+v", r)
	}
	key := "verify:attempts:LOGIN:a@b.c"
	for range 3 {
		db.Incr(ctx, key)
	}
	db.Expire(ctx, key, 5*time.Minute)
	n := decode.As[decode.Counter](dec(t, db, 2, key, now))
	if n == nil || n.Value != 3 || n.Limit != 5 || n.OnExceed != "lock" || n.Reached || n.TTL <= 0 {
		t.Fatalf("counter: %+v", n)
	}
	db.IncrBy(ctx, key, 2)
	if n = decode.As[decode.Counter](dec(t, db, 2, key, now)); n.Value != 5 || !n.Reached {
		t.Fatalf("counter at 5: %+v", n)
	}
}

// An idempotency mark ("1", SETNX, 24 h) and a replay nonce whose value
// is the request's timestamp, shown as a time.
func TestMarkersAndStats(t *testing.T) {
	s := redistest.Start(t)
	ctx := context.Background()
	now := time.Now()
	db14 := s.Client(14)
	db14.SetNX(ctx, "mg:score:idempotency:sub-1", "1", 24*time.Hour)
	mk := decode.As[decode.Marker](dec(t, db14, 14, "mg:score:idempotency:sub-1", now))
	if mk == nil || mk.Value != "1" || !mk.At.IsZero() || mk.TTL <= 23*time.Hour {
		t.Fatalf("idempotency: %+v", mk)
	}
	db6 := s.Client(6)
	at := now.Add(-3 * time.Second).Truncate(time.Millisecond)
	key := "auth:replay:ada:POST:/api/pay:n0nce"
	db6.SetNX(ctx, key, strconv.FormatInt(at.UnixMilli(), 10), 5*time.Minute)
	if mk = decode.As[decode.Marker](dec(t, db6, 6, key, now)); mk == nil || !mk.At.Equal(at) {
		t.Fatalf("nonce: %+v", mk)
	}
	db6.Set(ctx, key, strconv.FormatInt(at.Unix(), 10), 5*time.Minute)
	if mk = decode.As[decode.Marker](dec(t, db6, 6, key, now)); !mk.At.Equal(at.Truncate(time.Second)) {
		t.Fatalf("nonce in seconds: %+v", mk)
	}
	db13 := s.Client(13)
	db13.HIncrBy(ctx, "agent:usage:gpt-4o", "inputTokens", 1200)
	db13.HIncrBy(ctx, "agent:usage:gpt-4o", "requestCount", 3)
	st := decode.As[decode.Stats](dec(t, db13, 13, "agent:usage:gpt-4o", now))
	if st == nil || len(st.Fields) != 6 || st.Fields[0] != (decode.StatField{Name: "inputTokens", Value: "1200", Present: true}) ||
		st.Fields[1].Present || st.Fields[4].Value != "3" {
		t.Fatalf("stats: %+v", st)
	}
}

func TestEpochNear(t *testing.T) {
	now := time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		in   string
		want time.Time
	}{
		{"1", time.Time{}},
		{"abc", time.Time{}},
		{"-5", time.Time{}},
		{strconv.FormatInt(now.UnixMilli(), 10), now},
		{strconv.FormatInt(now.Unix(), 10), now},
		{"99999999999999999", time.Time{}},
	} {
		if got := decode.EpochNear(c.in, now); !got.Equal(c.want) {
			t.Errorf("EpochNear(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}

// On the embedded demo (miniredis): the seeded reservation without a TTL
// is flagged, the concurrency sets' members link to reservations that
// exist, a breaker hint is open, and every bloom's set bits are exactly
// the distinct positions of its exact set's members.
func TestDemoRoles(t *testing.T) {
	ctx := context.Background()
	d, err := demo.Start(ctx, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	var gw, ei string
	for _, c := range d.Connections() {
		switch c.Name {
		case "gateway":
			gw = c.URL
		case "eisland":
			ei = c.URL
		}
	}
	client := func(url string, db int) *redis.Client {
		o, err := redis.ParseURL(url)
		if err != nil {
			t.Fatal(err)
		}
		o.DB, o.DisableIdentity = db, true
		c := redis.NewClient(o)
		t.Cleanup(func() { c.Close() })
		return c
	}
	g := client(gw, 0)
	keys, _, err := g.Scan(ctx, 0, "q:*", 10000).Result()
	if err != nil {
		t.Fatal(err)
	}
	noTTL, linked, sets := 0, 0, 0
	for _, k := range keys {
		switch {
		case strings.HasPrefix(k, "q:reserved:"):
			if r := decode.As[decode.Reservation](gwDec(t, g, k, decode.Env{Pack: gatewayPack})); r != nil && r.NoTTL {
				noTTL++
			}
		case strings.HasPrefix(k, "q:conc:"):
			sets++
			cs := decode.As[decode.ConcurrencySet](gwDec(t, g, k, decode.Env{Pack: gatewayPack}))
			for _, mb := range cs.Members {
				if mb.Reservation != "q:reserved:"+mb.ID {
					t.Fatalf("%s member %q links %q", k, mb.ID, mb.Reservation)
				}
				if mb.Reserved {
					linked++
				}
			}
		}
	}
	if noTTL != 1 || sets == 0 || linked == 0 {
		t.Fatalf("demo gateway: %d reservations without TTL (want 1), %d concurrency sets, %d linked members", noTTL, sets, linked)
	}
	if h := decode.As[decode.BreakerHint](gwDec(t, g, "cb:hint:openai:gpt-4o", decode.Env{})); h == nil || !h.Open {
		t.Fatalf("demo hint: %+v", h)
	}
	for _, b := range []struct {
		db        int
		bloom     string
		set       string
		bits      int64
		wantBytes int64
	}{{0, "version:app:bloom", "version:app:set", 1000003, 0}, {3, "wallpaper:detail:bloom", "wallpaper:detail:set", 2000003, 0}, {9, "user:ban:bloom", "user:ban:set", 1000003, 0}} {
		c := client(ei, b.db)
		members, err := c.SMembers(ctx, b.set).Result()
		if err != nil || len(members) == 0 {
			t.Fatalf("%s: %v, %d members", b.set, err, len(members))
		}
		pos := map[int64]bool{}
		for _, m := range members {
			for _, p := range redisview.BloomPositions(m, b.bits, 6) {
				pos[p] = true
			}
		}
		got := decode.As[decode.Bloom](dec(t, c, b.db, b.bloom, time.Now()))
		if got == nil || !got.Counted || got.SetBits != int64(len(pos)) || got.Members != int64(len(members)) {
			t.Fatalf("%s: %+v, want %d set bits and %d members", b.bloom, got, len(pos), len(members))
		}
	}
}
