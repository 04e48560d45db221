package search_test

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/demo"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/redisview/search"
)

// userKeys writes, as the eIsland seed does, one key of every family that
// names a user (its username, its account, its e-mail, its active order),
// and returns them by "db:key".
func userKeys(t *testing.T, rs *redistest.Server, user, email, order string) map[string]bool {
	t.Helper()
	ctx := context.Background()
	out := map[string]bool{}
	set := func(db int, key string, v any, ttl time.Duration) {
		if err := rs.Client(db).Set(ctx, key, v, ttl).Err(); err != nil {
			t.Fatal(err)
		}
		out[strconv.Itoa(db)+":"+key] = true
	}
	b64 := demo.SliderKeyPart
	now := time.Now()
	set(1, "server:avatar-data::"+user, "https://cdn/a.png", 5*time.Minute)
	set(2, "identity:rate:"+user, 2, 5*time.Minute)
	set(2, "identity:verified:"+user, "1", time.Hour)
	set(2, "verify:code:LOGIN:"+email, "ab12", 5*time.Minute)
	set(2, "verify:attempts:LOGIN:"+email, 3, 5*time.Minute)
	set(2, "verify:rate:email:hour:"+email, 2, time.Hour)
	set(3, "server:wallpaper-my-list::total:"+user+":sea:static", "7", 5*time.Minute)
	rs.Client(4).HSet(ctx, "verify:slider:rate:create:account:"+b64(user), "tokens", "3", "ts", now.UnixMilli())
	rs.Client(4).Expire(ctx, "verify:slider:rate:create:account:"+b64(user), time.Minute)
	out["4:verify:slider:rate:create:account:"+b64(user)] = true
	set(4, "verify:slider:fail:account:"+b64(user), 2, 10*time.Minute)
	set(4, "verify:slider:fail:account:"+b64(email), 1, 10*time.Minute) // signed in by e-mail
	set(5, "totp:security:secret:enc:"+user, "Q0lQSEVSVEVYVA==", time.Hour)
	set(5, "totp:security:fail:"+user, 4, 10*time.Minute)
	set(5, "totp:security:replay:"+user+":59233841:004211", "1", 2*time.Minute)
	rs.Client(6).ZAdd(ctx, "auth:limit:login:failures:"+user, redis.Z{Score: float64(now.UnixMilli()), Member: strconv.FormatInt(now.UnixMilli(), 10) + ":1"})
	out["6:auth:limit:login:failures:"+user] = true
	set(6, "auth:limit:login:lock:"+user, strconv.FormatInt(now.Add(9*time.Minute).UnixMilli(), 10), 9*time.Minute)
	set(6, "auth:replay:"+user+":POST:/api/user/profile:9c0ffee", now.UnixMilli(), 5*time.Minute)
	set(7, "upload:limit:user-avatar:account:"+user, 1, time.Hour)
	set(7, "wallpaper:upload:"+user, 2, time.Hour)
	set(8, "issue-feedback:submit:"+user+":10.0.0.1", 1, time.Hour)
	set(10, "payment:user:active-order:"+user, order, time.Hour)
	set(10, "payment:order:channel:"+order, "wechat", time.Hour)
	set(10, "payment:order:receipt-email:"+order, email, time.Hour)
	set(10, "payment:order:op-lock:"+order, "3f2a", 15*time.Second)
	set(10, "payment:lock:create:test:alipay:"+user, "9d1e", 15*time.Second)
	set(12, "agent:balance:"+user, "1234.56789012", 0)
	set(14, "mg:score:high:2048:"+user, 4096, time.Hour)
	rs.Client(14).HSet(ctx, "mg:score:user-meta:2048:"+user, "durationMs", 1000, "moves", 20, "achievedAt", now.UnixMilli())
	out["14:mg:score:user-meta:2048:"+user] = true
	set(14, "mg:score:submit:rate:snake:"+user, 2, time.Minute)
	set(14, "mg:score:session:2048:"+user+":s9", "seed:1", time.Hour)
	rs.Client(14).ZAdd(ctx, "mg:score:leaderboard:2048", redis.Z{Score: 4096, Member: user})
	rs.Client(14).ZAdd(ctx, "mg:score:leaderboard:snake", redis.Z{Score: 10, Member: "someone"})
	return out
}

func userConn(t *testing.T) (*redistest.Server, *redisview.Conn) {
	t.Helper()
	rs := redistest.Start(t)
	c, err := redisview.Open(redisview.ConnConfig{Name: "t", URL: rs.URL(0)}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.ForcePack(schema.BuiltinPack("eisland"))
	return rs, c
}

func boards(c *redisview.Conn) []search.Board {
	f := c.Pack().Family("mg-leaderboard")
	return []search.Board{{DB: 14, Key: "mg:score:leaderboard:2048", Family: f}, {DB: 14, Key: "mg:score:leaderboard:snake", Family: f}}
}

// The user page lists exactly the user's keys: every one, across
// databases, none of a look-alike ("ops:admin2") or another user's, with
// the e-mail found through the active order's receipt.
func TestUserFindsExactlyTheUsersKeys(t *testing.T) {
	for _, who := range []struct{ user, twin, email string }{
		{"ops:admin", "ops:admin2", "ops+admin@eisland.dev"},
		{"李雷🦊 x", "李雷🦊 x2", "lilei@163.com"},
	} {
		t.Run(who.user, func(t *testing.T) {
			rs, c := userConn(t)
			ctx := context.Background()
			want := userKeys(t, rs, who.user, who.email, "EI20261201000001")
			userKeys(t, rs, who.twin, "twin@x.io", "EI20261201000002")
			userKeys(t, rs, "bob", "bob@x.io", "EI20261201000003")
			// The ban bloom holds the user (bits and set, as the seed writes it).
			bp := c.Pack().Family("user-ban-bloom").Params.(*schema.BloomParams)
			for _, pos := range redisview.BloomPositions(who.user, bp.Bits, bp.Hashes) {
				rs.Client(9).SetBit(ctx, "user:ban:bloom", pos, 1)
			}
			rs.Client(9).SAdd(ctx, "user:ban:set", who.user)
			rs.Client(14).ZAdd(ctx, "mg:score:leaderboard:2048", redis.Z{Score: 5000, Member: who.user})
			q := search.UserQuery{Subject: search.Subject{Name: who.user}, Boards: boards(c), Scan: true, Reprobe: true}
			if _, err := search.RunUser(ctx, c, q, search.DefaultUserLimits); err != nil { // opens the connections
				t.Fatal(err)
			}
			before, _ := rs.CommandCalls(ctx)
			r, err := search.RunUser(ctx, c, q, search.DefaultUserLimits)
			if err != nil {
				t.Fatal(err)
			}
			after, _ := rs.CommandCalls(ctx)
			got := map[string]bool{}
			for _, h := range r.Hits {
				got[strconv.Itoa(h.DB)+":"+h.Key] = true
			}
			for k := range want {
				if !got[k] {
					t.Errorf("missing %q", k)
				}
			}
			for k := range got {
				if !want[k] {
					t.Errorf("not the user's: %q", k)
				}
			}
			if r.Subject.Email != who.email || r.Subject.EmailFrom != "payment:order:receipt-email:EI20261201000001" {
				t.Errorf("e-mail %q from %q", r.Subject.Email, r.Subject.EmailFrom)
			}
			if len(r.Ranks) != 2 || !r.Ranks[0].Found || r.Ranks[0].Rank != 0 || r.Ranks[0].Score != 5000 || r.Ranks[1].Found {
				t.Errorf("ranks: %+v", r.Ranks)
			}
			if len(r.Bans) != 1 || r.Bans[0].Verdict != "banned" || !r.Bans[0].InSet || len(r.Bans[0].Positions) != 6 {
				t.Errorf("ban: %+v", r.Bans)
			}
			var total int64
			for name, n := range after {
				total += n - before[name]
			}
			total -= 1 + after["hello"] - before["hello"] // INFO commandstats itself, and its client's HELLO
			if total != int64(r.Commands) || total > 150 || after["keys"] != before["keys"] {
				diff := map[string]int64{}
				for name, n := range after {
					if n != before[name] {
						diff[name] = n - before[name]
					}
				}
				t.Errorf("commands: counted %d, Redis saw %d: %v", r.Commands, total, diff)
			}
			// The TOTP replay key holds digits only after the name: the
			// scan found it, the twin's was not taken.
			if !slices.ContainsFunc(r.Hits, func(h search.UserHit) bool { return h.Scan && h.DB == 5 }) {
				t.Error("the replay marker was not found by scan")
			}
		})
	}
}

// The twin and a stranger are not banned; a name in the bloom by chance
// (its bits set by others) but not in the set is a false positive.
func TestUserBanVerdicts(t *testing.T) {
	rs, c := userConn(t)
	ctx := context.Background()
	bp := c.Pack().Family("user-ban-bloom").Params.(*schema.BloomParams)
	for _, pos := range redisview.BloomPositions("ghost", bp.Bits, bp.Hashes) {
		rs.Client(9).SetBit(ctx, "user:ban:bloom", pos, 1)
	}
	rs.Client(9).SAdd(ctx, "user:ban:set", "other")
	for name, want := range map[string]string{
		"ghost":  "not banned: the bloom says maybe, the set says no (a false positive)",
		"ghost2": "not banned",
	} {
		r, err := search.RunUser(ctx, c, search.UserQuery{Subject: search.Subject{Name: name}, Reprobe: true}, search.DefaultUserLimits)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Bans) != 1 || r.Bans[0].Verdict != want {
			t.Errorf("%s: %+v", name, r.Bans)
		}
	}
}

// A read without Scan re-reads the keys earlier scans found and issues no
// SCAN.
func TestUserRereadWithoutScan(t *testing.T) {
	rs, c := userConn(t)
	ctx := context.Background()
	userKeys(t, rs, "ann", "ann@x.io", "EI1")
	first, err := search.RunUser(ctx, c, search.UserQuery{Subject: search.Subject{Name: "ann"}, Boards: boards(c), Scan: true, Reprobe: true}, search.DefaultUserLimits)
	if err != nil {
		t.Fatal(err)
	}
	rs.Client(8).Del(ctx, "issue-feedback:submit:ann:10.0.0.1")
	before, _ := rs.CommandCalls(ctx)
	rs.Client(10).Set(ctx, "payment:lock:create:pro-month:ann", "u1", time.Minute) // derived, new: seen by a Reprobe only
	again, err := search.RunUser(ctx, c, search.UserQuery{Subject: search.Subject{Name: "ann"}, Boards: boards(c), Known: first.Hits}, search.DefaultUserLimits)
	if err != nil {
		t.Fatal(err)
	}
	after, _ := rs.CommandCalls(ctx)
	if after["scan"] != before["scan"] {
		t.Error("a re-read scanned")
	}
	if len(again.Hits) != len(first.Hits)-1 || again.Checked >= first.Checked {
		t.Errorf("re-read: %d hits, first %d (one deleted); %d keys checked, first %d", len(again.Hits), len(first.Hits), again.Checked, first.Checked)
	}
	full, err := search.RunUser(ctx, c, search.UserQuery{Subject: search.Subject{Name: "ann"}, Boards: boards(c), Known: again.Hits, Reprobe: true}, search.DefaultUserLimits)
	if err != nil {
		t.Fatal(err)
	}
	isNew := func(h search.UserHit) bool { return h.Key == "payment:lock:create:pro-month:ann" }
	if slices.ContainsFunc(again.Hits, isNew) {
		t.Error("a tick checked a derived key that was not found before")
	}
	if len(full.Hits) != len(first.Hits) || !slices.ContainsFunc(full.Hits, isNew) {
		var a, b []string
		for _, h := range again.Hits {
			a = append(a, h.Key)
		}
		for _, h := range full.Hits {
			b = append(b, h.Key)
		}
		t.Errorf("reprobe: %d hits, want %d with the new key\nagain %q\nfull %q", len(full.Hits), len(first.Hits), a, b)
	}
}

// sensitiveConn is userConn with the eisland pack's families ids marked
// sensitive (a fresh copy: the built-in pack is shared).
func sensitiveConn(t *testing.T, ids ...string) (*redistest.Server, *redisview.Conn) {
	t.Helper()
	rs, c := userConn(t)
	p, err := schema.BuiltinPack("eisland").With(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		f := p.Family(id)
		if f == nil {
			t.Fatalf("no family %s", id)
		}
		f.Sensitive = true
	}
	c.ForcePack(p)
	return rs, c
}

// A leaderboard or a ban list of a sensitive family is never read for the
// user page: no rank, no score, no bit, no membership — the result says
// it was withheld, and Redis saw none of the commands that read them.
func TestUserWithholdsSensitiveBoardsAndBans(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name       string
		ids        []string
		rank, bans bool // withheld
	}{
		{"board", []string{"mg-leaderboard"}, true, false},
		{"bloom", []string{"user-ban-bloom"}, false, true},
		{"set", []string{"user-ban-set"}, false, true},
		{"none", nil, false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rs, c := sensitiveConn(t, tt.ids...)
			userKeys(t, rs, "ann", "ann@x.io", "EI20261201000009")
			rs.Client(14).ZAdd(ctx, "mg:score:leaderboard:2048", redis.Z{Score: 999_999, Member: "ann"})
			bp := c.Pack().Family("user-ban-bloom").Params.(*schema.BloomParams)
			for _, pos := range redisview.BloomPositions("ann", bp.Bits, bp.Hashes) {
				rs.Client(9).SetBit(ctx, "user:ban:bloom", pos, 1)
			}
			rs.Client(9).SAdd(ctx, "user:ban:set", "ann")
			q := search.UserQuery{Subject: search.Subject{Name: "ann"}, Boards: boards(c), Scan: true, Reprobe: true}
			before, _ := rs.CommandCalls(ctx)
			r, err := search.RunUser(ctx, c, q, search.DefaultUserLimits)
			if err != nil {
				t.Fatal(err)
			}
			after, _ := rs.CommandCalls(ctx)
			calls := func(names ...string) (n int64) {
				for _, name := range names {
					n += after[name] - before[name]
				}
				return n
			}
			if len(r.Ranks) != 2 {
				t.Fatalf("ranks: %+v", r.Ranks)
			}
			for _, rk := range r.Ranks {
				if rk.Sensitive != tt.rank || tt.rank && (rk.Found || rk.Score != 0 || rk.Rank != 0) {
					t.Errorf("rank on %s: %+v; withheld %v", rk.Board.Key, rk, tt.rank)
				}
			}
			if n := calls("zrank", "zrevrank", "zscore"); tt.rank && n != 0 || !tt.rank && n == 0 {
				t.Errorf("%d ZRANK/ZREVRANK/ZSCORE sent; withheld %v", n, tt.rank)
			}
			if len(r.Bans) != 1 {
				t.Fatalf("bans: %+v", r.Bans)
			}
			b := r.Bans[0]
			if b.Sensitive != tt.bans || tt.bans && (b.Verdict != "" || b.InSet || b.AllSet || len(b.Bits) != 0) {
				t.Errorf("ban check %+v; withheld %v", b, tt.bans)
			}
			if !tt.bans && b.Verdict != "banned" {
				t.Errorf("ban verdict %q, want banned", b.Verdict)
			}
			if n := calls("getbit", "sismember", "exists"); tt.bans && n != 0 || !tt.bans && n == 0 {
				t.Errorf("%d GETBIT/SISMEMBER/EXISTS sent; withheld %v", n, tt.bans)
			}
		})
	}
}

// A refusal is not an absence: when the server refuses the ban check's
// GETBIT or the rank's ZRANK (an ACL without them), the user page says the
// verdict and the rank were not read — not "not banned", not "not on the
// board".
func TestUserRefusedBanAndRankAreNotAbsences(t *testing.T) {
	rs := redistest.Start(t)
	ctx := context.Background()
	if err := rs.Client(0).Do(ctx, "ACL", "SETUSER", "nobits", "on", ">pw", "~*", "+@all", "-getbit", "-zrank", "-zrevrank").Err(); err != nil {
		t.Fatal(err)
	}
	c, err := redisview.Open(redisview.ConnConfig{Name: "t", URL: "redis://nobits:pw@" + rs.Addr + "/0"}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.ForcePack(schema.BuiltinPack("eisland"))
	const user = "ops:admin"
	bp := c.Pack().Family("user-ban-bloom").Params.(*schema.BloomParams)
	for _, pos := range redisview.BloomPositions(user, bp.Bits, bp.Hashes) {
		rs.Client(9).SetBit(ctx, "user:ban:bloom", pos, 1)
	}
	rs.Client(9).SAdd(ctx, "user:ban:set", user)
	rs.Client(14).ZAdd(ctx, "mg:score:leaderboard:2048", redis.Z{Score: 5000, Member: user})
	q := search.UserQuery{Subject: search.Subject{Name: user}, Boards: boards(c), Scan: true, Reprobe: true}
	r, err := search.RunUser(ctx, c, q, search.DefaultUserLimits)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Bans) != 1 || r.Bans[0].Err == "" || !strings.HasPrefix(r.Bans[0].Verdict, "not read") || r.Bans[0].AllSet {
		t.Errorf("a refused ban check: %+v", r.Bans)
	}
	if len(r.Ranks) == 0 || r.Ranks[0].Err == "" || r.Ranks[0].Found {
		t.Errorf("a refused rank: %+v", r.Ranks)
	}
}
