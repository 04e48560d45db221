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

// limitsAPI is the Rate limits page's JSON: list-limits.
type limitsAPI struct {
	Redis    struct{ State string }
	Pack     struct{ State, Name string }
	Sweep    struct{ State string }
	Filter   json.RawMessage
	Families struct{ Items []limitFamilyAPI }
}

type limitFamilyAPI struct {
	ID        string
	DB        int `json:"db"`
	Throttled int
	Hidden    int
	Policy    struct {
		Limit    *int64
		WindowMs *int64 `json:"window_ms"`
	}
	Rows []limitRowAPI
}

type limitRowAPI struct {
	Key     json.RawMessage
	Subject []struct {
		Name  string
		Value json.RawMessage
	}
	State               string
	Used, Limit, Tokens *float64
	LockedUntil         *time.Time `json:"locked_until"`
	Actions             []struct{ Kind, Title, Requires string }
}

func limitsJSON(t *testing.T, u string) limitsAPI {
	t.Helper()
	code, _, body := get(t, u, "Accept", "application/json")
	if code != 200 {
		t.Fatalf("%s: %d %s", u, code, body)
	}
	var vm limitsAPI
	if err := json.Unmarshal([]byte(body), &vm); err != nil {
		t.Fatalf("%s: %v\n%s", u, err, body)
	}
	return vm
}

func group(vm limitsAPI, fam string) *limitFamilyAPI {
	for i := range vm.Families.Items {
		if vm.Families.Items[i].ID == fam {
			return &vm.Families.Items[i]
		}
	}
	return nil
}

// value is a placeholder's value or a key, as the API writes a name.
func (r limitRowAPI) value(t *testing.T, i int) string { return jsonName(t, r.Subject[i].Value) }

func is(f *float64, want float64) bool { return f != nil && *f == want }

// waitRows polls the page's JSON until the family shows want rows.
func waitRows(t *testing.T, u, fam string, want int) limitsAPI {
	t.Helper()
	var vm limitsAPI
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
	if logins.Rows[0].value(t, 0) != "eve" || logins.Rows[0].State != "locked" || logins.Rows[0].LockedUntil == nil || time.Until(*logins.Rows[0].LockedUntil) < 5*time.Minute {
		t.Fatalf("the locked login is not first: %+v", logins.Rows)
	}
	if !is(logins.Rows[0].Used, 5) || !is(logins.Rows[0].Limit, 5) || !is(logins.Rows[1].Used, 2) || !is(logins.Rows[1].Limit, 5) || logins.Rows[1].State != "ok" && logins.Rows[1].State != "near_limit" {
		t.Fatalf("levels %+v", logins.Rows)
	}
	if logins.DB != 6 || logins.Policy.Limit == nil || *logins.Policy.Limit != 5 || logins.Policy.WindowMs == nil || *logins.Policy.WindowMs != 300000 {
		t.Fatalf("limit %+v", logins.Policy)
	}
	// Unlock login is offered on eve's window (its key, the family's db).
	if len(logins.Rows[0].Actions) != 1 || logins.Rows[0].Actions[0].Kind != action.KindUnlockLogin || jsonName(t, logins.Rows[0].Key) != "auth:limit:login:failures:eve" {
		t.Fatalf("actions %+v of %s", logins.Rows[0].Actions, logins.Rows[0].Key)
	}

	buckets := group(vm, "slider-rate-create-account")
	if buckets == nil || len(buckets.Rows) != 2 {
		t.Fatalf("buckets %+v", buckets)
	}
	alice, bob := buckets.Rows[0], buckets.Rows[1]
	if alice.value(t, 0) != "alice@example.com" || alice.State != "throttled" || alice.Tokens == nil || *alice.Tokens >= 1 || !is(alice.Limit, 12) {
		t.Fatalf("alice %+v", alice)
	}
	if bob.value(t, 0) != "bob@example.com" || bob.State == "throttled" || bob.Tokens == nil || *bob.Tokens < 11 || *bob.Tokens > 12 {
		t.Fatalf("bob %+v", bob)
	}
	// A failure counter offers Clear failures.
	attempts := group(vm, "verify-attempts")
	if attempts == nil || len(attempts.Rows) != 1 || !is(attempts.Rows[0].Used, 5) || !is(attempts.Rows[0].Limit, 5) || attempts.Rows[0].State != "throttled" ||
		len(attempts.Rows[0].Actions) != 1 || attempts.Rows[0].Actions[0].Kind != action.KindClearFailures {
		t.Fatalf("verify attempts %+v", attempts)
	}
	// Families with a throttled row come first.
	if st := vm.Families.Items[0].Rows[0].State; st != "throttled" && st != "locked" {
		t.Fatalf("first family %s has no throttled row", vm.Families.Items[0].ID)
	}

	// The filter matches decoded placeholder values.
	fvm := limitsJSON(t, u+"?q=ALICE")
	if len(fvm.Families.Items) != 2 || group(fvm, "slider-rate-create-account") == nil || group(fvm, "verify-attempts") == nil || jsonName(t, fvm.Filter) != "ALICE" {
		t.Fatalf("filtered %+v", fvm.Families.Items)
	}
	for _, g := range fvm.Families.Items {
		if len(g.Rows) != 1 || g.Rows[0].value(t, len(g.Rows[0].Subject)-1) != "alice@example.com" {
			t.Fatalf("filtered %s: %+v", g.ID, g.Rows)
		}
	}
	if g := group(fvm, "slider-rate-create-account"); g.Hidden != 1 {
		t.Fatalf("hidden %d, want the 1 row kept that does not match", g.Hidden)
	}
	if vm := limitsJSON(t, u+"?q=nobody-at-all"); len(vm.Families.Items) != 0 || jsonName(t, vm.Filter) != "nobody-at-all" {
		t.Fatalf("no match: %+v", vm)
	}

	// A filter that is not UTF-8 is shown escaped; the JSON carries it
	// byte-exact ({"b64"}); both stay valid UTF-8.
	code, _, body := get(t, u+"?q=%FFal")
	if code != 200 || !utf8.ValidString(body) || !strings.Contains(body, `\xffal`) {
		t.Fatalf("invalid filter: %d %.500q", code, body)
	}
	code, _, body = get(t, u+"?q=%FFal", "Accept", "application/json")
	if code != 200 || !utf8.ValidString(body) || jsonName(t, limitsJSON(t, u+"?q=%FFal").Filter) != "\xffal" {
		t.Fatalf("invalid filter as JSON: %d %.500q", code, body)
	}

	// HTML: the page, its live topic, the filter box.
	code, _, body = get(t, u+"?q=eve")
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
	if len(vm.Families.Items) != 0 || vm.Sweep.State != "no_family" || vm.Pack.Name != "plain" {
		t.Fatalf("empty state %+v", vm)
	}
	code, _, body := get(t, f.srv.URL+route.LocksURL("main"))
	if code != 200 || !strings.Contains(body, "No lock family in this pack (plain)") {
		t.Fatalf("locks empty state %d: %.3000s", code, body)
	}
	rs.Stop()
	waitFor(t, "monitor sees redis down", func() bool { return !f.reg.All()[0].Status().Up })
	vm = limitsJSON(t, f.srv.URL+route.LimitsURL("main"))
	if vm.Redis.State != "down" {
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
	// The page's JSON is list-locks'.
	type lockRow struct {
		Subject []struct{ Value json.RawMessage }
		Holder  json.RawMessage
		TTLMs   int64  `json:"ttl_ms"`
		AgeMs   *int64 `json:"age_ms"`
		NoTTL   bool   `json:"no_ttl"`
		Actions []struct{ Kind string }
	}
	var vm struct {
		Short struct {
			Counted bool
			Why     string
		}
		Families struct {
			Items []struct {
				ID   string
				Rows []lockRow
			}
		}
	}
	var rows []lockRow
	waitFor(t, "two locks", func() bool {
		code, _, body := get(t, u, "Accept", "application/json")
		if code != 200 || json.Unmarshal([]byte(body), &vm) != nil {
			return false
		}
		for _, g := range vm.Families.Items {
			if g.ID == "lock-create-pro-month" {
				rows = g.Rows
				return len(g.Rows) == 2
			}
		}
		return false
	})
	if !rows[0].NoTTL || rows[0].TTLMs != -1 || jsonName(t, rows[0].Subject[0].Value) != "hank" {
		t.Fatalf("the lock without a TTL is not first, flagged: %+v", rows)
	}
	gina := rows[1]
	if jsonName(t, gina.Holder) != holder || gina.NoTTL || gina.TTLMs <= 0 || gina.TTLMs > 15000 || gina.AgeMs == nil || len(gina.Actions) != 1 || gina.Actions[0].Kind != action.KindForceUnlock {
		t.Fatalf("gina %+v", gina)
	}
	if vm.Short.Counted || !strings.Contains(vm.Short.Why, "notify-keyspace-events") {
		t.Fatalf("short locks %+v", vm.Short)
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
		var vm limitsAPI
		waitFor(t, c.user+" sees eve", func() bool {
			code, _, body := b.do("GET", u+"?q=eve", nil, "Accept", "application/json")
			vm = limitsAPI{}
			return code == 200 && json.Unmarshal([]byte(body), &vm) == nil && group(vm, "login-failures") != nil && len(group(vm, "login-failures").Rows) > 0
		})
		row := group(vm, "login-failures").Rows[0]
		if got := len(row.Actions) > 0; got != c.act {
			t.Fatalf("%s: actions %+v", c.user, row.Actions)
		}
		// The page's live topic carries the links only for a role that acts.
		_, _, page := b.do("GET", u+"?q=eve", nil)
		if got := strings.Contains(page, url.QueryEscape(handlers.OpsTopic{Kind: "limits", Conn: "main", Filter: "eve", Act: true}.String())); got != c.act {
			t.Fatalf("%s: the acting topic on the page: %v", c.user, got)
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
