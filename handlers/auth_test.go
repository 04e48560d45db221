package handlers_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/handlers"
	"github.com/keydeck/keydeck/internal/people"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/internal/server"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/action"
)

// browser is an HTTP client with cookies that does not follow redirects.
type browser struct {
	t    *testing.T
	c    *http.Client
	base string
}

func newBrowser(t *testing.T, base string) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, base: base, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (b *browser) do(method, path string, form url.Values, hdr ...string) (int, http.Header, string) {
	b.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, _ := http.NewRequest(method, b.base+path, body)
	// As a browser following the console's own links and forms says.
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", b.base)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i+1] == "" {
			req.Header.Del(hdr[i])
		} else {
			req.Header.Set(hdr[i], hdr[i+1])
		}
	}
	res, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, textOf(out)
}

// follow is do, then the GET a browser makes after a 303 (a confirmed
// action lands on its audit record's page).
func (b *browser) follow(method, path string, form url.Values, hdr ...string) (int, http.Header, string) {
	b.t.Helper()
	code, h, body := b.do(method, path, form, hdr...)
	if code != http.StatusSeeOther {
		return code, h, body
	}
	return b.do(http.MethodGet, h.Get("Location"), nil)
}

var csrfRe = regexp.MustCompile(`name="_csrf" value="([^"]+)"`)

// csrf fetches a page and returns the form token it carries.
func (b *browser) csrf(path string) string {
	b.t.Helper()
	_, _, body := b.do(http.MethodGet, path, nil)
	m := csrfRe.FindStringSubmatch(body)
	if m == nil {
		b.t.Fatalf("no CSRF token on %s", path)
	}
	return m[1]
}

func (b *browser) login(user, pw string) int {
	b.t.Helper()
	tok := b.csrf("/login")
	code, _, _ := b.do(http.MethodPost, "/login", url.Values{"_csrf": {tok}, "username": {user}, "password": {pw}, "next": {"/"}})
	return code
}

// Every route × every role (and anonymous) gives the expected status;
// viewers never reach an action.
func TestRBACMatrix(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	f.redis.Client(3).Set(context.Background(), "server:wallpaper-detail::1:a:1", "{}", time.Minute)
	const (
		anon = iota
		viewer
		support
		admin
	)
	who := []string{"anonymous", "vera", "sam", "ada"}
	routes := []struct {
		method, path string
		form         bool
		want         [4]int
	}{
		{"GET", "/healthz", false, [4]int{200, 200, 200, 200}},
		{"GET", "/readyz", false, [4]int{200, 200, 200, 200}},
		{"GET", "/login", false, [4]int{200, 303, 303, 303}},
		{"GET", "/static/css/app.css", false, [4]int{200, 200, 200, 200}},
		{"GET", "/", false, [4]int{303, 200, 200, 200}},
		{"GET", "/c/main", false, [4]int{303, 200, 200, 200}},
		{"GET", "/c/main/db/3", false, [4]int{303, 200, 200, 200}},
		{"GET", "/c/main/db/3/key?k=server:wallpaper-detail::1:a:1", false, [4]int{303, 200, 200, 200}},
		{"GET", "/audit", false, [4]int{303, 200, 200, 200}},
		{"GET", "/ws?topic=overview:main", false, [4]int{401, 400, 400, 400}}, // not an upgrade: 400 once past auth
		{"POST", "/actions/preview", true, [4]int{401, 403, 403, 200}},
		{"GET", "/actions/undo?conn=main&db=3&record=1-1", false, [4]int{303, 403, 403, 404}},
		{"POST", "/actions/execute", true, [4]int{401, 403, 400, 400}}, // a bogus token: refused before anything runs
		{"POST", "/logout", true, [4]int{303, 303, 303, 303}},
	}
	browsers := make([]*browser, 4)
	for i := range browsers {
		browsers[i] = newBrowser(t, f.srv.URL)
		if i != anon {
			if code := browsers[i].login(who[i], "right-password"); code != http.StatusSeeOther {
				t.Fatalf("sign in %s: %d", who[i], code)
			}
		}
	}
	var matrix strings.Builder
	for _, r := range routes {
		row := r.method + " " + r.path
		for i, b := range browsers {
			var form url.Values
			if r.form {
				page := "/"
				if i == anon {
					page = "/login"
				}
				form = url.Values{"_csrf": {b.csrf(page)}, "kind": {"delete-key"}, "conn": {"main"}, "db": {"3"}, "key": {"server:wallpaper-detail::1:a:1"}, "token": {"bogus"}}
			}
			code, _, body := b.do(r.method, r.path, form)
			if code != r.want[i] {
				t.Errorf("%s as %s: %d, want %d (%.120s)", row, who[i], code, r.want[i], body)
			}
			row += " " + who[i] + "=" + http.StatusText(code)
		}
		matrix.WriteString(row + "\n")
	}
	t.Logf("RBAC matrix:\n%s", matrix.String())
}

func TestLoginLimitHoldsAcrossReplicas(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	a := newAuthFixture(t, rs, nil)
	b := newAuthFixture(t, rs, nil)
	ba, bb := newBrowser(t, a.srv.URL), newBrowser(t, b.srv.URL)
	for i := range 5 {
		br := ba
		if i%2 == 1 {
			br = bb
		}
		if code := br.login("ada", "wrong"); code != http.StatusUnauthorized {
			t.Fatalf("attempt %d: %d", i, code)
		}
	}
	tok := bb.csrf("/login")
	code, hdr, body := bb.do(http.MethodPost, "/login", url.Values{"_csrf": {tok}, "username": {"ada"}, "password": {"right-password"}})
	if code != http.StatusTooManyRequests || !strings.Contains(body, "Try again in") || hdr.Get("Retry-After") == "" {
		t.Fatalf("sixth attempt on the other replica: %d %q", code, hdr.Get("Retry-After"))
	}
}

func TestSessionAndCSRFHoldAcrossReplicas(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	a := newAuthFixture(t, rs, nil)
	b := newAuthFixture(t, rs, nil)
	br := newBrowser(t, a.srv.URL)
	if code := br.login("ada", "right-password"); code != http.StatusSeeOther {
		t.Fatalf("login: %d", code)
	}
	tok := br.csrf("/c/main")
	// Same cookies, other replica.
	br.base = b.srv.URL
	u, _ := url.Parse(a.srv.URL)
	ub, _ := url.Parse(b.srv.URL)
	br.c.Jar.SetCookies(ub, br.c.Jar.Cookies(u))
	if code, _, _ := br.do(http.MethodGet, "/c/main", nil); code != http.StatusOK {
		t.Fatalf("session on the other replica: %d", code)
	}
	rs.Client(3).Set(context.Background(), "server:wallpaper-detail::9:a:1", "{}", time.Minute)
	code, _, body := br.do(http.MethodPost, "/actions/preview", url.Values{"_csrf": {tok}, "kind": {"delete-key"}, "conn": {"main"}, "db": {"3"}, "key": {"server:wallpaper-detail::9:a:1"}})
	if code != http.StatusOK || !strings.Contains(body, `data-testid="confirm"`) {
		t.Fatalf("CSRF token from one replica refused by the other: %d", code)
	}
}

func TestCSRFAndOrigin(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	br := newBrowser(t, f.srv.URL)
	br.login("ada", "right-password")
	tok := br.csrf("/c/main")
	form := func() url.Values {
		return url.Values{"_csrf": {tok}, "kind": {"delete-key"}, "conn": {"main"}, "db": {"0"}, "key": {"x"}}
	}
	if code, _, _ := br.do(http.MethodPost, "/actions/preview", form(), "Origin", "https://evil.example"); code != http.StatusForbidden {
		t.Fatalf("cross-origin POST: %d", code)
	}
	noTok := form()
	noTok.Del("_csrf")
	if code, _, _ := br.do(http.MethodPost, "/actions/preview", noTok); code != http.StatusForbidden {
		t.Fatalf("POST without token: %d", code)
	}
	bad := form()
	bad.Set("_csrf", "forged")
	if code, _, _ := br.do(http.MethodPost, "/actions/preview", bad); code != http.StatusForbidden {
		t.Fatalf("POST with a forged token: %d", code)
	}
	if code, _, _ := br.do(http.MethodPost, "/actions/preview", form(), "Origin", "", "Sec-Fetch-Site", "cross-site"); code != http.StatusForbidden {
		t.Fatalf("cross-site fetch: %d", code)
	}
	// A websocket from a foreign page is refused even with the session cookie.
	u := "ws" + strings.TrimPrefix(f.srv.URL, "http") + "/ws?topic=overview%3Amain"
	hdr := http.Header{"Origin": {"https://evil.example"}}
	pu, _ := url.Parse(f.srv.URL)
	for _, ck := range br.c.Jar.Cookies(pu) {
		hdr.Add("Cookie", ck.Name+"="+ck.Value)
	}
	if _, res, err := websocket.DefaultDialer.Dial(u, hdr); err == nil || res == nil || res.StatusCode != http.StatusForbidden {
		t.Fatalf("foreign-origin websocket: %v %+v", err, res)
	}
}

func TestProxyIdentityOnlyFromTrustedAddresses(t *testing.T) {
	t.Parallel()
	trusted := newAuthFixture(t, nil, func(a *handlers.Auth) {
		a.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
		a.RoleHeader = "X-Forwarded-Role"
	})
	br := newBrowser(t, trusted.srv.URL)
	code, _, body := br.do(http.MethodGet, "/c/main", nil, "X-Forwarded-Email", "ada@example.com")
	if code != http.StatusOK || !strings.Contains(body, `data-testid="whoami"`) || !strings.Contains(body, "ada@example.com") {
		t.Fatalf("proxy user: %d", code)
	}
	untrusted := newAuthFixture(t, nil, func(a *handlers.Auth) {
		a.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("10.9.9.9/32")}
	})
	br = newBrowser(t, untrusted.srv.URL)
	if code, _, _ := br.do(http.MethodGet, "/c/main", nil, "X-Forwarded-User", "ada"); code != http.StatusSeeOther {
		t.Fatalf("header from an untrusted address was believed: %d", code)
	}
}

func TestReadOnlyDisablesActions(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, func(a *handlers.Auth) { a.ReadOnly = true })
	br := newBrowser(t, f.srv.URL)
	br.login("ada", "right-password")
	tok := br.csrf("/c/main")
	code, _, body := br.do(http.MethodPost, "/actions/preview", url.Values{"_csrf": {tok}, "kind": {"delete-key"}, "conn": {"main"}, "db": {"0"}, "key": {"x"}})
	if code != http.StatusForbidden || !strings.Contains(body, "read-only") {
		t.Fatalf("read-only preview: %d", code)
	}
}

var regexpToken = regexp.MustCompile(`name="token" value="([^"]+)"`)

func auditFilterAll() action.Filter { return action.Filter{Limit: 500} }

// recordText flattens a record the way any consumer could see it, with
// recorded DUMPs decoded (a base64 DUMP would hide a leaked secret).
func recordText(r action.Record) string {
	b, _ := json.Marshal(r)
	out := string(b)
	for _, t := range r.Targets {
		if d, err := base64.StdEncoding.DecodeString(t.Prior); err == nil {
			out += string(d)
		}
	}
	return out
}

// An admin deletes a key through the confirmation step and undoes it from
// the audit log; the key comes back with its value and TTL.
func TestDeleteAndUndoThroughPages(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	ctx := context.Background()
	key := "mg:score:user-meta:2048:李雷"
	f.redis.Client(14).HSet(ctx, key, "score", "4096", "moves", "300")
	f.redis.Client(14).Expire(ctx, key, time.Hour)
	br := newBrowser(t, f.srv.URL)
	br.login("ada", "right-password")
	tok := br.csrf("/")
	confirm := func(form url.Values) string {
		t.Helper()
		var code int
		var body string
		if form.Get("kind") == "undo" {
			code, _, body = br.do(http.MethodGet, "/actions/undo?"+form.Encode(), nil)
		} else {
			code, _, body = br.do(http.MethodPost, "/actions/preview", form)
		}
		if code != http.StatusOK {
			t.Fatalf("preview %s: %d %.300s", form.Get("kind"), code, body)
		}
		m := regexpToken.FindStringSubmatch(body)
		if m == nil {
			t.Fatal("no confirmation token")
		}
		code, _, body = br.follow(http.MethodPost, "/actions/execute", url.Values{"_csrf": {tok}, "token": {m[1]}})
		if code != http.StatusOK {
			t.Fatalf("execute %s: %d %.300s", form.Get("kind"), code, body)
		}
		return body
	}
	confirm(url.Values{"_csrf": {tok}, "kind": {"delete-key"}, "conn": {"main"}, "db": {"14"}, "key": {key}})
	if n, _ := f.redis.Client(14).Exists(ctx, key).Result(); n != 0 {
		t.Fatal("not deleted")
	}
	recs, _, err := f.run.ReadAudit(ctx, action.Filter{Action: "delete-key"})
	if err != nil || len(recs) == 0 || !recs[0].Undoable() {
		t.Fatalf("no undoable record: %v %+v", err, recs)
	}
	_, _, audit := br.do(http.MethodGet, "/audit", nil)
	if !strings.Contains(audit, `data-testid="undo"`) {
		t.Fatal("the audit page offers no undo to an admin")
	}
	confirm(url.Values{"kind": {"undo"}, "conn": {"main"}, "db": {"14"}, "record": {recs[0].ID}})
	got, _ := f.redis.Client(14).HGetAll(ctx, key).Result()
	ttl, _ := f.redis.Client(14).TTL(ctx, key).Result()
	if got["score"] != "4096" || got["moves"] != "300" || ttl < 59*time.Minute {
		t.Fatalf("after undo: %v ttl %v", got, ttl)
	}
	// A second undo of the same record is refused.
	code, _, _ := br.do(http.MethodGet, "/actions/undo?conn=main&db=14&record="+url.QueryEscape(recs[0].ID), nil)
	if code != http.StatusConflict {
		t.Fatalf("second undo: %d", code)
	}
}

// Support removes a leaderboard entry from the row's link: the preview is
// a GET, the confirmation a POST with CSRF, and the member, its metadata
// and its high-score cache go together.
func TestSupportRemovesLeaderboardEntry(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	ctx := context.Background()
	db := f.redis.Client(14)
	const board = "mg:score:leaderboard:2048"
	cheater := "ops:admin <script>"
	db.ZAdd(ctx, board, redis.Z{Score: 1e6, Member: cheater}, redis.Z{Score: 10, Member: "honest"})
	db.HSet(ctx, "mg:score:user-meta:2048:"+cheater, "score", "1000000")
	db.Set(ctx, "mg:score:high:2048:"+cheater, "1000000", time.Hour)
	br := newBrowser(t, f.srv.URL)
	br.login("sam", "right-password")
	_, _, page := br.do(http.MethodGet, "/c/main/db/14/leaderboard?k="+url.QueryEscape(board), nil)
	if !strings.Contains(page, `data-testid="lb-remove"`) {
		t.Fatal("support sees no Remove link")
	}
	q := url.Values{"kind": {"remove-leaderboard-entry"}, "conn": {"main"}, "db": {"14"}, "key": {board}, "arg.member": {cheater}}
	code, _, body := br.do(http.MethodGet, "/actions/preview?"+q.Encode(), nil)
	if code != http.StatusOK || !strings.Contains(body, "cold start") {
		t.Fatalf("preview: %d %.300s", code, body)
	}
	m := regexpToken.FindStringSubmatch(body)
	tok := csrfRe.FindStringSubmatch(body)
	if m == nil || tok == nil {
		t.Fatal("no confirmation form")
	}
	code, _, body = br.follow(http.MethodPost, "/actions/execute", url.Values{"_csrf": {tok[1]}, "token": {m[1]}})
	if code != http.StatusOK {
		t.Fatalf("execute: %d %.300s", code, body)
	}
	if _, err := db.ZScore(ctx, board, cheater).Result(); err != redis.Nil {
		t.Fatal("member still on the board")
	}
	if n, _ := db.Exists(ctx, "mg:score:user-meta:2048:"+cheater, "mg:score:high:2048:"+cheater).Result(); n != 0 {
		t.Fatal("companion keys left behind")
	}
	if s, _ := db.ZScore(ctx, board, "honest").Result(); s != 10 {
		t.Fatal("another member was touched")
	}
	// A viewer is shown no Remove link and may not open the preview.
	vb := newBrowser(t, f.srv.URL)
	vb.login("vera", "right-password")
	if _, _, p := vb.do(http.MethodGet, "/c/main/db/14/leaderboard?k="+url.QueryEscape(board), nil); strings.Contains(p, `data-testid="lb-remove"`) {
		t.Fatal("viewer sees a Remove link")
	}
	if code, _, _ := vb.do(http.MethodGet, "/actions/preview?"+q.Encode(), nil); code != http.StatusForbidden {
		t.Fatalf("viewer preview: %d", code)
	}
}

// The review's bypass: a topic named without the trailing colon must be
// authorised like the mode it parses to.
func TestViewerCannotWatchAdminTopics(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	br := newBrowser(t, f.srv.URL)
	br.login("vera", "right-password")
	pu, _ := url.Parse(f.srv.URL)
	hdr := http.Header{"Origin": {f.srv.URL}}
	for _, ck := range br.c.Jar.Cookies(pu) {
		hdr.Add("Cookie", ck.Name+"="+ck.Value)
	}
	for _, topic := range []string{"audit:undo", "audit:undo:", "lb:remove:conn=main&db=14&k=x"} {
		_, res, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(f.srv.URL, "http")+"/ws?topic="+url.QueryEscape(topic), hdr)
		if err == nil || res == nil || res.StatusCode != http.StatusForbidden {
			t.Errorf("viewer watching %q: %v %v", topic, err, res)
		}
	}
}

// Open mode answers only loopback host names (DNS rebinding), and request
// bodies are bounded.
func TestHostAllowlistAndBodyLimit(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	req, _ := http.NewRequest(http.MethodGet, f.srv.URL+"/c/main", nil)
	req.Host = "rebind.evil.example:8080"
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusMisdirectedRequest {
		t.Fatalf("rebinding host: %d", res.StatusCode)
	}
	for _, h := range []string{"localhost:8080", "127.0.0.1", "[::1]:80"} {
		req.Host = h
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("host %s: %d", h, res.StatusCode)
		}
	}
	big := strings.NewReader("username=" + strings.Repeat("a", 100<<10))
	req, _ = http.NewRequest(http.MethodPost, f.srv.URL+"/login", big)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", f.srv.URL)
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("100 KiB body: %d", res.StatusCode)
	}
}

// Behind a trusted proxy the client is the rightmost untrusted hop: what
// the client itself put in X-Forwarded-For cannot dodge the address limit.
func TestForwardedForRightmostUntrusted(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, func(a *handlers.Auth) {
		a.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
		a.Limiter = people.NewLoginLimiter(nil, people.LoginPolicy{PerPair: 100, PerAddr: 3, Window: time.Minute})
	})
	br := newBrowser(t, f.srv.URL)
	for i := range 4 {
		tok := br.csrf("/login")
		xff := fmt.Sprintf("10.0.0.%d, 203.0.113.7", i) // spoofed first hop, real client last
		code, _, _ := br.do(http.MethodPost, "/login", url.Values{"_csrf": {tok}, "username": {fmt.Sprintf("user%d", i)}, "password": {"x"}}, "X-Forwarded-For", xff)
		want := http.StatusUnauthorized
		if i == 3 {
			want = http.StatusTooManyRequests
		}
		if code != want {
			t.Fatalf("attempt %d: %d, want %d", i, code, want)
		}
	}
}

// Attempts are reserved before the password is checked: parallel guesses
// get no more than the limit between them.
func TestParallelGuessesHitTheLimit(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	br := newBrowser(t, f.srv.URL)
	tok := br.csrf("/login")
	var wg sync.WaitGroup
	codes := make(chan int, 20)
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, _, _ := br.do(http.MethodPost, "/login", url.Values{"_csrf": {tok}, "username": {"ada"}, "password": {"guess"}})
			codes <- code
		}()
	}
	wg.Wait()
	close(codes)
	tried := 0
	for c := range codes {
		switch c {
		case http.StatusUnauthorized:
			tried++
		case http.StatusTooManyRequests:
		default:
			t.Fatalf("status %d", c)
		}
	}
	if tried != 5 {
		t.Fatalf("%d passwords were checked, want exactly 5", tried)
	}
}

// Undo does not bring back a key that would have expired by now.
func TestUndoRefusesExpiredKey(t *testing.T) {
	t.Parallel()
	// The console's clock is moved past the key's TTL instead of sleeping.
	var mu sync.Mutex
	var ahead time.Duration
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return time.Now().Add(ahead) }
	rs := redistest.Start(t)
	f := startConsole(t, rs, server.Config{Conns: []redisview.ConnConfig{{Name: "main", URL: rs.URL(0)}}, PackFor: map[string]string{"main": "eisland"},
		Auth: handlers.Auth{Users: testUsers(), Secret: []byte(testSecret)}, Now: now}, nil).up(t)
	ctx := context.Background()
	key := "payment:order:op-lock:ORD-1"
	// A minute of TTL: signing in and previewing on a loaded machine must
	// not outlast it (the key would be gone before the delete).
	f.redis.Client(10).Set(ctx, key, "5d0c7e21-uuid", time.Minute)
	br := newBrowser(t, f.srv.URL)
	br.login("ada", "right-password")
	tok := br.csrf("/")
	_, _, body := br.do(http.MethodPost, "/actions/preview", url.Values{"_csrf": {tok}, "kind": {"delete-key"}, "conn": {"main"}, "db": {"10"}, "key": {key}})
	m := regexpToken.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no confirmation: %.300s", body)
	}
	if code, _, body := br.follow(http.MethodPost, "/actions/execute", url.Values{"_csrf": {tok}, "token": {m[1]}}); code != http.StatusOK {
		t.Fatalf("delete: %d %.300s", code, body)
	}
	recs, _, _ := f.run.ReadAudit(ctx, action.Filter{Action: "delete-key"})
	if len(recs) == 0 {
		t.Fatal("no audit record of the delete")
	}
	mu.Lock()
	ahead = time.Minute + time.Second
	mu.Unlock()
	code, _, body := br.do(http.MethodGet, "/actions/undo?conn=main&db=10&record="+url.QueryEscape(recs[0].ID), nil)
	if code != http.StatusConflict || !strings.Contains(body, "would have expired") {
		t.Fatalf("undo after expiry: %d %.400s", code, body)
	}
}
