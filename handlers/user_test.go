package handlers_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"html"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/handlers"
	"github.com/keydeck/keydeck/internal/demo"
	"github.com/keydeck/keydeck/internal/route"
)

// seedUser writes keys of one user across databases as the eIsland
// seed does, and returns them by "db:key".
func seedUser(t *testing.T, f *console, user string, lockFor time.Duration) map[string]bool {
	t.Helper()
	ctx := context.Background()
	out := map[string]bool{}
	set := func(db int, key string, v any, ttl time.Duration) {
		if err := f.redis.Client(db).Set(ctx, key, v, ttl).Err(); err != nil {
			t.Fatal(err)
		}
		out[strconv.Itoa(db)+":"+key] = true
	}
	now := time.Now()
	set(2, "identity:rate:"+user, 3, 5*time.Minute)
	set(4, "verify:slider:fail:account:"+demo.SliderKeyPart(user), 3, 10*time.Minute)
	set(5, "totp:security:secret:plain:"+user, "JBSWY3DPEHPK3PXPSECRET", time.Minute)
	set(5, "totp:security:replay:"+user+":59233841:004211", "1", 2*time.Minute)
	f.redis.Client(6).ZAdd(ctx, "auth:limit:login:failures:"+user, redis.Z{Score: float64(now.UnixMilli()), Member: strconv.FormatInt(now.UnixMilli(), 10) + ":7"})
	out["6:auth:limit:login:failures:"+user] = true
	set(6, "auth:limit:login:lock:"+user, strconv.FormatInt(now.Add(lockFor).UnixMilli(), 10), lockFor)
	set(8, "issue-feedback:submit:"+user+":10.0.0.1", 1, time.Hour)
	set(12, "agent:balance:"+user, "12.50000000", 0)
	set(14, "mg:score:high:2048:"+user, 4096, time.Hour)
	f.redis.Client(14).ZAdd(ctx, "mg:score:leaderboard:2048", redis.Z{Score: 4096, Member: user})
	return out
}

// userJSON is the user page's JSON: get-user's.
type userJSON struct {
	Name     json.RawMessage
	Commands int
	Bans     []struct {
		Banned       *bool
		BloomMissing bool `json:"bloom_missing"`
	}
	Keys []struct {
		DB      int `json:"db"`
		Key     json.RawMessage
		Actions []struct{ Kind string }
	}
	Ranks []struct {
		Found *bool
		Rank  *int64
	}
}

// The page of a user lists exactly its keys, decoded and grouped; the
// look-alike "ops:admin2" is not it; a sensitive value appears nowhere;
// support sees links to the previews of the fixing actions, which open;
// a viewer sees none.
func TestUserPageListsTheUsersKeys(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	want := seedUser(t, f, "ops:admin", 8*time.Minute)
	seedUser(t, f, "ops:admin2", time.Minute)
	f.redis.Client(14).ZAdd(context.Background(), "mg:score:leaderboard:2048", redis.Z{Score: 5000, Member: "ops:admin"})
	sam := newBrowser(t, f.srv.URL)
	sam.login("sam", "right-password")
	page := route.UserURL("main", "ops:admin")
	code, _, body := sam.do(http.MethodGet, page, nil, "Accept", "application/json")
	if code != http.StatusOK {
		t.Fatalf("status %d: %.300s", code, body)
	}
	if strings.Contains(body, "PXPSECRET") {
		t.Fatal("the JSON shows a sensitive value")
	}
	var vm userJSON
	if err := json.Unmarshal([]byte(body), &vm); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	kinds := map[string][]string{}
	for _, k := range vm.Keys {
		name := jsonName(t, k.Key)
		got[strconv.Itoa(k.DB)+":"+name] = true
		for _, a := range k.Actions {
			kinds[name] = append(kinds[name], a.Kind)
		}
	}
	for k := range want {
		if !got[k] {
			t.Errorf("missing %s", k)
		}
	}
	for k := range got {
		if !want[k] {
			t.Errorf("not the user's: %s", k)
		}
	}
	if a := kinds["auth:limit:login:lock:ops:admin"]; len(a) != 1 || a[0] != "unlock-login" {
		t.Errorf("login lock actions: %v", a)
	}
	if len(vm.Ranks) != 1 || vm.Ranks[0].Found == nil || !*vm.Ranks[0].Found || vm.Ranks[0].Rank == nil || *vm.Ranks[0].Rank != 1 {
		t.Errorf("ranks: %+v", vm.Ranks)
	}
	if len(vm.Bans) != 1 || vm.Bans[0].Banned == nil || *vm.Bans[0].Banned || !vm.Bans[0].BloomMissing {
		t.Errorf("bans: %+v", vm.Bans)
	}
	if vm.Commands <= 0 || vm.Commands > 200 {
		t.Errorf("commands: %d", vm.Commands)
	}
	// The HTML: grouped, decoded, the unlock time, the preview link opens.
	_, _, htm := sam.do(http.MethodGet, page, nil)
	if strings.Contains(htm, "PXPSECRET") {
		t.Fatal("the page shows a sensitive value")
	}
	d := doc(t, htm)
	if !strings.Contains(d.Find(`[data-testid="user-key"]`).Text(), "Unlocks at") {
		t.Error("no unlock time")
	}
	if d.Find(`[data-testid="user-withheld"]`).Length() == 0 {
		t.Error("the TOTP secret is not marked withheld")
	}
	href, ok := d.Find(`[data-testid="user-action-reset-limit"]`).First().Attr("href")
	if !ok {
		t.Fatal("support sees no reset link")
	}
	code, _, pv := sam.do(http.MethodGet, html.UnescapeString(href), nil, "Sec-Fetch-Site", "same-origin")
	if code != http.StatusOK || !strings.Contains(pv, "ops:admin") {
		t.Fatalf("preview %s: %d %.300s", href, code, pv)
	}
	// A viewer sees the same keys, no action.
	vera := newBrowser(t, f.srv.URL)
	vera.login("vera", "right-password")
	_, _, vh := vera.do(http.MethodGet, page, nil)
	if strings.Contains(vh, `data-testid="user-action-reset`) || strings.Contains(vh, `data-testid="user-action-remove`) || strings.Contains(vh, `data-testid="user-action-force`) {
		t.Fatal("a viewer sees an action")
	}
	if n := doc(t, vh).Find(`[data-testid="user-key"]`).Length(); n != len(want) {
		t.Errorf("viewer sees %d keys, want %d", n, len(want))
	}
}

// A unicode name with markup, and one that is not UTF-8, are carried
// byte-exact and shown inert.
func TestUserPageUnicodeName(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	for _, user := range []string{`李雷 <b>"x"</b>`, "\xffab<i>"} {
		want := seedUser(t, f, user, time.Minute)
		_, _, body := get(t, f.srv.URL+route.UserURL("main", user), "Accept", "application/json")
		var vm struct {
			Name json.RawMessage
			Keys []json.RawMessage
		}
		if err := json.Unmarshal([]byte(body), &vm); err != nil {
			t.Fatal(err)
		}
		var name string
		if err := json.Unmarshal(vm.Name, &name); err != nil { // not UTF-8: {"b64": …}
			var b struct{ B64 string }
			_ = json.Unmarshal(vm.Name, &b)
			raw, _ := base64.StdEncoding.DecodeString(b.B64)
			name = string(raw)
		}
		if name != user || len(vm.Keys) != len(want) {
			t.Errorf("name %q, found %d, want %d", name, len(vm.Keys), len(want))
		}
		_, _, htm := get(t, f.srv.URL+route.UserURL("main", user))
		if strings.Contains(htm, "<b>") || strings.Contains(htm, "<i>") {
			t.Fatal("markup of the name is live")
		}
	}
}

// The page is live: a key written after the page opened appears in the
// topic's next fragment (a derived key, re-read without a scan).
func TestUserTopicPushes(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	seedUser(t, f, "ann", time.Minute)
	_, _, body := get(t, f.srv.URL+route.UserURL("main", "ann"))
	d := doc(t, body)
	ws, ok := d.Find(`[data-testid="live"]`).Attr("ws-connect")
	if !ok {
		t.Fatal("no live topic")
	}
	u := "ws" + strings.TrimPrefix(f.srv.URL, "http") + html.UnescapeString(ws)
	c, _, err := websocket.DefaultDialer.Dial(u, http.Header{"Origin": {f.srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// The first fragment takes over the page load's scans: it re-reads
	// the keys they found instead of scanning again.
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, first, err := c.ReadMessage()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(first), "This read re-read the 2 keys scans found, without scanning") || !strings.Contains(string(first), `data-testid="user-scans"`) {
		t.Errorf("the first fragment scanned again: %.2000s", first)
	}
	f.redis.Client(7).Set(context.Background(), "wallpaper:upload:ann", 5, time.Hour)
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		_ = c.SetReadDeadline(deadline)
		_, msg, err := c.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(textOf(msg), "wallpaper:upload:ann") && strings.Contains(string(msg), `id="user-live"`) {
			return
		}
	}
	t.Fatal("the new key never appeared")
}

// An empty name is the form; a name over 1 KiB is refused.
func TestUserPageEmptyAndTooLong(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	code, _, body := get(t, f.srv.URL+route.UserPath("main"))
	if code != http.StatusOK || !strings.Contains(body, `data-testid="user-help"`) {
		t.Fatalf("empty: %d", code)
	}
	code, _, _ = get(t, f.srv.URL+route.UserPath("main")+"?name="+url.QueryEscape(strings.Repeat("x", 1025)))
	if code != http.StatusBadRequest {
		t.Fatalf("too long: %d", code)
	}
}

// A search for a value that looks like a username links its user page;
// an IP does not.
func TestSearchLinksTheUserPage(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	_, _, body := get(t, f.srv.URL+route.SearchURL("main", "ops:admin"))
	href, ok := doc(t, body).Find(`[data-testid="search-user-page"]`).Attr("href")
	if !ok || href != route.UserURL("main", "ops:admin") {
		t.Errorf("user page link %q", href)
	}
	_, _, body = get(t, f.srv.URL+route.SearchURL("main", "10.0.0.7"))
	if strings.Contains(body, `data-testid="search-user-page"`) {
		t.Error("an IP links a user page")
	}
}

// A viewer may watch a user's page, not its support mode (which carries
// the action links).
func TestViewerCannotWatchUserSupportTopic(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	br := newBrowser(t, f.srv.URL)
	br.login("vera", "right-password")
	pu, _ := url.Parse(f.srv.URL)
	hdr := http.Header{"Origin": {f.srv.URL}}
	for _, ck := range br.c.Jar.Cookies(pu) {
		hdr.Add("Cookie", ck.Name+"="+ck.Value)
	}
	dial := func(topic string) (*http.Response, error) {
		c, res, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(f.srv.URL, "http")+"/ws?topic="+url.QueryEscape(topic), hdr)
		if err == nil {
			c.Close()
		}
		return res, err
	}
	if res, err := dial(handlers.UserTopic{Conn: "main", Name: "ops:admin", Support: true}.String()); err == nil || res == nil || res.StatusCode != http.StatusForbidden {
		t.Errorf("viewer watching the support mode: %v %v", err, res)
	}
	if _, err := dial(handlers.UserTopic{Conn: "main", Name: "ops:admin"}.String()); err != nil {
		t.Errorf("viewer watching the viewer mode: %v", err)
	}
}

// The seed says base64(account) and Java's default encoder is standard
// and padded: the bucket of "张三:vip" at 5byg5LiJOnZpcA== is on the
// user's page (found as the Rate limits page finds it), "张三:vip2"'s is
// not.
func TestUserPageListsTheStandardBase64Bucket(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	ctx := context.Background()
	db4 := f.redis.Client(4)
	key := "verify:slider:rate:create:account:5byg5LiJOnZpcA=="
	if base64.StdEncoding.EncodeToString([]byte("张三:vip")) != "5byg5LiJOnZpcA==" {
		t.Fatal("not Java's default encoding")
	}
	for _, k := range []string{key, "verify:slider:rate:create:account:" + base64.StdEncoding.EncodeToString([]byte("张三:vip2"))} {
		if err := db4.HSet(ctx, k, "tokens", "4", "ts", time.Now().UnixMilli()).Err(); err != nil {
			t.Fatal(err)
		}
		db4.Expire(ctx, k, time.Minute)
	}
	code, _, body := get(t, f.srv.URL+route.UserURL("main", "张三:vip"), "Accept", "application/json")
	if code != http.StatusOK {
		t.Fatalf("status %d: %.300s", code, body)
	}
	var vm userJSON
	if err := json.Unmarshal([]byte(body), &vm); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, k := range vm.Keys {
		got = append(got, strconv.Itoa(k.DB)+":"+jsonName(t, k.Key))
	}
	if len(got) != 1 || got[0] != "4:"+key {
		t.Errorf("keys %q, want only 4:%s", got, key)
	}
	_, _, htm := get(t, f.srv.URL+route.UserURL("main", "张三:vip"))
	if !strings.Contains(doc(t, htm).Find(`[data-testid="user-key"]`).Text(), "5byg5LiJOnZpcA==") {
		t.Error("the page does not show the bucket's key")
	}
}
