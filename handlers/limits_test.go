package handlers_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/handlers"
	"github.com/keydeck/keydeck/internal/demo"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/internal/server"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/views"
)

func b64url(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// seedLimits writes, the way eIsland does, a drained slider bucket
// (alice), a barely used one (bob), a locked login (eve) and one with two
// failures (frank).
func seedLimits(t *testing.T, rs *redistest.Server) {
	t.Helper()
	ctx := context.Background()
	hit := func(account string, n int) {
		key := "verify:slider:rate:create:account:" + b64url(account)
		for range n {
			if err := demo.SliderTokenBucket.Run(ctx, rs.Client(4), []string{key}, time.Now().UnixMilli(), 12, 12.0/60/1000, 1, 120).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	hit("alice@example.com", 12)
	hit("bob@example.com", 1)
	now := time.Now()
	for user, n := range map[string]int{"eve": 5, "frank": 2} {
		key := "auth:limit:login:failures:" + user
		for i := range n {
			ms := now.Add(-time.Duration(i+1) * time.Second).UnixMilli()
			rs.Client(6).ZAdd(ctx, key, redis.Z{Score: float64(ms), Member: fmt.Sprintf("%d:%d", ms, i)})
		}
		rs.Client(6).Expire(ctx, key, 15*time.Minute)
	}
	rs.Client(6).Set(ctx, "auth:limit:login:lock:eve", strconv.FormatInt(now.Add(10*time.Minute).UnixMilli(), 10), 10*time.Minute)
	// Wrong verification codes: a counter with a limit, counting failures.
	for range 5 {
		if err := demo.RateLimitIncrExpire.Run(ctx, rs.Client(2), []string{"verify:attempts:LOGIN:alice@example.com"}, 300).Err(); err != nil {
			t.Fatal(err)
		}
	}
}

func limitsJSON(t *testing.T, u string) views.LimitsVM {
	t.Helper()
	code, _, body := get(t, u, "Accept", "application/json")
	if code != 200 {
		t.Fatalf("%s: %d %s", u, code, body)
	}
	var vm views.LimitsVM
	if err := json.Unmarshal([]byte(body), &vm); err != nil {
		t.Fatalf("%s: %v\n%s", u, err, body)
	}
	return vm
}

func group(vm views.LimitsVM, fam string) *views.LimitGroup {
	for i := range vm.Groups {
		if vm.Groups[i].Family == fam {
			return &vm.Groups[i]
		}
	}
	return nil
}

// waitRows polls the page's JSON until the family shows want rows.
func waitRows(t *testing.T, u, fam string, want int) views.LimitsVM {
	t.Helper()
	var vm views.LimitsVM
	waitFor(t, fam+" rows on "+u, func() bool {
		vm = limitsJSON(t, u)
		g := group(vm, fam)
		return g != nil && len(g.Rows) == want
	})
	return vm
}

func TestLimitsPage(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	seedLimits(t, f.redis)
	u := f.srv.URL + route.LimitsURL("main")
	vm := waitRows(t, u, "login-failures", 2)

	logins := group(vm, "login-failures")
	if logins.Rows[0].Subject[0].Value != "eve" || !logins.Rows[0].Throttled || !strings.HasPrefix(logins.Rows[0].State, "locked until ") {
		t.Fatalf("the locked login is not first: %+v", logins.Rows)
	}
	if logins.Rows[0].Level != "5 of 5 used in the last 5m · 0 left" || logins.Rows[1].Level != "2 of 5 used in the last 5m · 3 left" || logins.Rows[1].Throttled {
		t.Fatalf("levels %+v", logins.Rows)
	}
	if !strings.Contains(logins.Limit, "limit 5 per 5m") {
		t.Fatalf("limit %q", logins.Limit)
	}
	// Unlock… opens the unlock-login preview of eve's window.
	if len(logins.Rows[0].Actions) != 1 || logins.Rows[0].Actions[0].Title != "Unlock…" {
		t.Fatalf("actions %+v", logins.Rows[0].Actions)
	}
	pu, _ := url.Parse(logins.Rows[0].Actions[0].Href)
	if pu.Path != route.Preview || pu.Query().Get("kind") != action.KindUnlockLogin || pu.Query().Get("key") != "auth:limit:login:failures:eve" || pu.Query().Get("db") != "6" {
		t.Fatalf("unlock link %q", logins.Rows[0].Actions[0].Href)
	}

	buckets := group(vm, "slider-rate-create-account")
	if buckets == nil || len(buckets.Rows) != 2 {
		t.Fatalf("buckets %+v", buckets)
	}
	alice, bob := buckets.Rows[0], buckets.Rows[1]
	if alice.Subject[0].Value != "alice@example.com" || !alice.Throttled || alice.Level != "0 of 12 tokens left" || alice.Left > 5 {
		t.Fatalf("alice %+v", alice)
	}
	if bob.Subject[0].Value != "bob@example.com" || bob.Throttled || !strings.HasPrefix(bob.Level, "11 of 12") {
		t.Fatalf("bob %+v", bob)
	}
	// A failure counter offers Clear failures….
	attempts := group(vm, "verify-attempts")
	if attempts == nil || len(attempts.Rows) != 1 || attempts.Rows[0].Level != "5 of 5 used · 0 left" || !attempts.Rows[0].Throttled ||
		len(attempts.Rows[0].Actions) != 1 || !strings.Contains(attempts.Rows[0].Actions[0].Href, "kind="+action.KindClearFailures) {
		t.Fatalf("verify attempts %+v", attempts)
	}
	// Families with a throttled row come first.
	if !vm.Groups[0].Rows[0].Throttled {
		t.Fatalf("first family %s has no throttled row", vm.Groups[0].Family)
	}

	// The filter matches decoded placeholder values.
	fvm := limitsJSON(t, u+"?q=ALICE")
	if len(fvm.Groups) != 2 || group(fvm, "slider-rate-create-account") == nil || group(fvm, "verify-attempts") == nil {
		t.Fatalf("filtered %+v", fvm.Groups)
	}
	for _, g := range fvm.Groups {
		if len(g.Rows) != 1 || g.Rows[0].Subject[len(g.Rows[0].Subject)-1].Value != "alice@example.com" {
			t.Fatalf("filtered %s: %+v", g.Family, g.Rows)
		}
	}
	if g := group(fvm, "slider-rate-create-account"); !strings.Contains(g.Note, `1 row kept does not match "ALICE"`) {
		t.Fatalf("note %q", g.Note)
	}
	if vm := limitsJSON(t, u+"?q=nobody-at-all"); len(vm.Groups) != 0 || !strings.Contains(vm.Empty, "nobody-at-all") {
		t.Fatalf("no match: %+v", vm)
	}

	// A filter that is not UTF-8 is shown escaped; the page stays valid.
	for _, accept := range []string{"text/html", "application/json"} {
		code, _, body := get(t, u+"?q=%FFal", "Accept", accept)
		if code != 200 || !utf8.ValidString(body) || !strings.Contains(body, `\xffal`) {
			t.Fatalf("%s: invalid filter: %d %.500q", accept, code, body)
		}
	}

	// HTML: the page, its live topic, the filter box.
	code, _, body := get(t, u+"?q=eve")
	if code != 200 || !strings.Contains(body, `data-testid="limit-row"`) || !strings.Contains(body, "Rate limits · main") ||
		!strings.Contains(body, url.QueryEscape(handlers.OpsTopic{Kind: "limits", Conn: "main", Filter: "eve", Act: true}.String())) {
		t.Fatalf("page %d: %.2000s", code, body)
	}

	// Unlocked elsewhere: the row goes from the live fragment.
	topic := handlers.OpsTopic{Kind: "limits", Conn: "main", Filter: "eve"}.String()
	f.frames(t, topic, func(msg []byte) bool { return !strings.Contains(string(msg), "locked until") })
	f.redis.Client(6).Del(context.Background(), "auth:limit:login:lock:eve", "auth:limit:login:failures:eve")
	f.frames(t, topic, func(msg []byte) bool {
		return strings.Contains(string(msg), "auth:limit:login:lock:eve") || strings.Contains(string(msg), "locked until")
	})
}

func TestLimitsPageEmptyAndDisconnected(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	// A pack with neither rate limits nor locks.
	pack, err := schema.Load("plain.yaml", []byte(`name: plain
title: Plain
families:
  - id: page-cache
    pattern: "cache:{page}"
    type: string
    ttl: {max: 5m}
    domain: Cache
    role: cache
    description: Rendered pages.
`))
	if err != nil {
		t.Fatal(err)
	}
	f := startConsole(t, rs, server.Config{
		Conns:   []redisview.ConnConfig{{Name: "main", URL: rs.URL(0)}},
		Packs:   []*schema.Pack{pack},
		PackFor: map[string]string{"main": "plain"},
	}, nil).up(t)
	vm := limitsJSON(t, f.srv.URL+route.LimitsURL("main"))
	if len(vm.Groups) != 0 || !strings.Contains(vm.Empty, "No rate-limit family in this pack (plain)") {
		t.Fatalf("empty state %+v", vm)
	}
	code, _, body := get(t, f.srv.URL+route.LocksURL("main"))
	if code != 200 || !strings.Contains(body, "No lock family in this pack (plain)") {
		t.Fatalf("locks empty state %d: %.3000s", code, body)
	}
	rs.Stop()
	waitFor(t, "monitor sees redis down", func() bool { return !f.reg.All()[0].Status().Up })
	vm = limitsJSON(t, f.srv.URL+route.LimitsURL("main"))
	if !strings.Contains(vm.Disconnected, "unreachable") {
		t.Fatalf("disconnected %+v", vm)
	}
	if code, _, _ := get(t, f.srv.URL+"/c/nosuch/limits"); code != 404 {
		t.Fatalf("unknown connection: %d", code)
	}
}

func TestLocksPage(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	ctx := context.Background()
	const (
		key    = "payment:lock:create:pro-month:gina"
		holder = "5d0c8f5e-8a6b-4f43-9d3c-2f1f3c9b7e21"
		stuck  = "payment:lock:create:pro-month:hank"
	)
	if !f.redis.Client(10).SetNX(ctx, key, holder, 15*time.Second).Val() {
		t.Fatal("SET NX PX refused")
	}
	f.redis.Client(10).Set(ctx, stuck, holder, 0)
	u := f.srv.URL + route.LocksURL("main")
	var vm views.LocksVM
	waitFor(t, "two locks", func() bool {
		code, _, body := get(t, u, "Accept", "application/json")
		vm = views.LocksVM{}
		if code != 200 || json.Unmarshal([]byte(body), &vm) != nil {
			return false
		}
		for _, g := range vm.Groups {
			if g.Family == "lock-create-pro-month" {
				return len(g.Rows) == 2
			}
		}
		return false
	})
	var g views.LockGroup
	for _, x := range vm.Groups {
		if x.Family == "lock-create-pro-month" {
			g = x
		}
	}
	if !g.Rows[0].NoTTL || g.Rows[0].Subject[0].Value != "hank" {
		t.Fatalf("the lock without a TTL is not first, flagged: %+v", g.Rows)
	}
	gina := g.Rows[1]
	if gina.Holder != holder || gina.NoTTL || gina.TTL == "" || gina.Age == "" || len(gina.Actions) != 1 || gina.Actions[0].Title != "Release…" {
		t.Fatalf("gina %+v", gina)
	}
	if !strings.Contains(vm.Short, "may be missed") || !strings.Contains(vm.Short, "notify-keyspace-events") {
		t.Fatalf("short locks line %q", vm.Short)
	}
	// Released: gone from the live fragment.
	topic := handlers.OpsTopic{Kind: "locks", Conn: "main", Filter: "gina"}.String()
	f.frames(t, topic, func(msg []byte) bool { return !strings.Contains(string(msg), holder) })
	f.redis.Client(10).Del(ctx, key)
	f.frames(t, topic, func(msg []byte) bool { return strings.Contains(string(msg), holder) })
}

// Only a role that may act gets the row links (and watches the topic that
// carries them); the key page offers every kind that applies to the key.
func TestLimitsActionsByRole(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	seedLimits(t, f.redis)
	u := route.LimitsURL("main")
	for _, c := range []struct {
		user string
		act  bool
	}{{"vera", false}, {"sam", true}} {
		b := newBrowser(t, f.srv.URL)
		if code := b.login(c.user, "right-password"); code != 303 {
			t.Fatalf("sign in %s: %d", c.user, code)
		}
		var vm views.LimitsVM
		waitFor(t, c.user+" sees eve", func() bool {
			code, _, body := b.do("GET", u+"?q=eve", nil, "Accept", "application/json")
			vm = views.LimitsVM{}
			return code == 200 && json.Unmarshal([]byte(body), &vm) == nil && group(vm, "login-failures") != nil
		})
		row := group(vm, "login-failures").Rows[0]
		if got := len(row.Actions) > 0; got != c.act {
			t.Fatalf("%s: actions %+v", c.user, row.Actions)
		}
		if got := strings.Contains(vm.WSURL, "act%3D1"); got != c.act {
			t.Fatalf("%s: topic %s", c.user, vm.WSURL)
		}
		if c.act {
			// The key page of the window and of the lock offers Unlock login.
			for db, key := range map[int]string{6: "auth:limit:login:failures:eve"} {
				code, _, body := b.do("GET", route.KeyURL("main", db, key), nil, "Accept", "application/json")
				if code != 200 || !strings.Contains(body, `"kind":"`+action.KindUnlockLogin+`"`) {
					t.Fatalf("key page %s: %d %.2000s", key, code, body)
				}
			}
			code, _, body := b.do("GET", route.KeyURL("main", 6, "auth:limit:login:lock:eve"), nil, "Accept", "application/json")
			if code != 200 || !strings.Contains(body, `"kind":"`+action.KindUnlockLogin+`"`) || strings.Contains(body, `"kind":"`+action.KindForceUnlock+`"`) {
				t.Fatalf("lock key page: %d %.2000s", code, body)
			}
		}
	}
	// A viewer cannot watch the acting topic.
	b := newBrowser(t, f.srv.URL)
	b.login("vera", "right-password")
	acting := route.LiveURL(handlers.OpsTopic{Kind: "limits", Conn: "main", Act: true}.String())
	if code, _, _ := b.do("GET", acting, nil); code != 403 {
		t.Fatalf("viewer on the acting topic: %d", code)
	}
	if code, _, _ := b.do("GET", route.LiveURL(handlers.OpsTopic{Kind: "limits", Conn: "main"}.String()), nil); code == 403 {
		t.Fatalf("viewer on the plain topic: %d", code)
	}
	sam := newBrowser(t, f.srv.URL)
	sam.login("sam", "right-password")
	if code, _, _ := sam.do("GET", acting, nil); code == 403 {
		t.Fatalf("support on the acting topic: %d", code)
	}
}
