package handlers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/keydeck/keydeck/handlers"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/internal/server"
	"github.com/keydeck/keydeck/redisview/action"
)

var tokenSecretRe = regexp.MustCompile(`value="(kdt_[^"]+)"[^>]*data-testid="token-secret"`)

// mintToken creates a token on /account/tokens as a signed-in browser:
// the form, its confirmation, and the page that shows the token once.
func mintToken(t *testing.T, b *browser, name, role, expires string) string {
	t.Helper()
	form := url.Values{"_csrf": {b.csrf("/account/tokens")}, "name": {name}, "role": {role}, "expires": {expires}}
	code, _, body := b.do(http.MethodPost, "/account/tokens", form)
	if code != http.StatusOK || !strings.Contains(body, `data-testid="confirm-create-token"`) || tokenSecretRe.MatchString(body) {
		t.Fatalf("create %s: %d, want a confirmation first: %.400s", name, code, body)
	}
	form.Set("confirm", "yes")
	code, hdr, body := b.do(http.MethodPost, "/account/tokens", form)
	m := tokenSecretRe.FindStringSubmatch(body)
	if code != http.StatusOK || m == nil {
		t.Fatalf("confirm %s: %d, no token shown: %.400s", name, code, body)
	}
	if hdr.Get("Cache-Control") != "no-store" {
		t.Fatalf("the page showing the token may be cached: Cache-Control %q", hdr.Get("Cache-Control"))
	}
	return html.UnescapeString(m[1])
}

// bearer sends a request with only the token: no cookie jar, no Origin,
// no CSRF token, as a script does.
func bearer(t *testing.T, base, method, path, token string, form url.Values, hdr ...string) (int, http.Header, string) {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, _ := http.NewRequest(method, base+path, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, textOf(out)
}

// A bearer GET needs no cookie and sets none; a bearer POST needs no CSRF
// token; a browser's POST without one is still refused.
func TestTokenBearerNeedsNoCookieNorCSRF(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	rs := redistest.Start(t)
	f := startConsole(t, rs, server.Config{Auth: handlers.Auth{Users: testUsers(), Secret: []byte(testSecret)}},
		slog.New(slog.NewTextHandler(&logs, nil))).up(t)
	ctx := context.Background()
	key := "server:wallpaper-detail::1:a:1"
	f.redis.Client(3).Set(ctx, key, "{}", 0)
	ada := newBrowser(t, f.srv.URL)
	ada.login("ada", "right-password")
	tok := mintToken(t, ada, "ci-bot", "admin", "30d")

	code, hdr, _ := bearer(t, f.srv.URL, http.MethodGet, "/c/main", tok, nil)
	if code != http.StatusOK || len(hdr.Values("Set-Cookie")) != 0 {
		t.Fatalf("bearer GET: %d, Set-Cookie %q", code, hdr.Values("Set-Cookie"))
	}
	form := url.Values{"kind": {"delete-key"}, "conn": {"main"}, "db": {"3"}, "key": {key}}
	code, hdr, body := bearer(t, f.srv.URL, http.MethodPost, "/actions/preview", tok, form)
	m := regexpToken.FindStringSubmatch(body)
	if code != http.StatusOK || m == nil || len(hdr.Values("Set-Cookie")) != 0 {
		t.Fatalf("bearer preview without CSRF: %d %.300s", code, body)
	}
	if code, hdr, body = bearer(t, f.srv.URL, http.MethodPost, "/actions/execute", tok, url.Values{"token": {m[1]}}); code != http.StatusSeeOther || !strings.HasPrefix(hdr.Get("Location"), "/audit/") {
		t.Fatalf("bearer execute without CSRF: %d %q %.300s", code, hdr.Get("Location"), body)
	}
	if f.redis.Client(3).Exists(ctx, key).Val() != 0 {
		t.Fatal("the token's delete did not happen")
	}
	// Audited as the token and its owner.
	recs, _, err := f.run.ReadAudit(ctx, action.Filter{Action: "delete-key"})
	if err != nil || len(recs) == 0 {
		t.Fatalf("audit: %v %+v", err, recs)
	}
	for _, r := range recs {
		if r.User != "ada (token ci-bot)" || r.Token != "ci-bot" || r.TokenOwner != "ada" || r.Level != "admin" {
			t.Fatalf("audit record %s: user %q token %q owner %q role %q", r.Phase, r.User, r.Token, r.TokenOwner, r.Level)
		}
	}
	_, _, audit := ada.do(http.MethodGet, "/audit", nil)
	if !strings.Contains(audit, "ada (token ci-bot)") {
		t.Fatal("the audit page does not show the token")
	}
	// A browser's POST without the CSRF token is still refused.
	if code, _, _ := ada.do(http.MethodPost, "/actions/preview", form); code != http.StatusForbidden {
		t.Fatalf("cookie POST without CSRF: %d, want 403", code)
	}
	// The token is in no log line, nor is one sent in a query string.
	bearer(t, f.srv.URL, http.MethodGet, "/c/main?access_token="+tok, "", nil)
	if strings.Contains(logs.String(), strings.TrimPrefix(tok, "kdt_")) {
		t.Fatalf("the token is in the log:\n%s", logs.String())
	}
}

// A token acts at its own role, not its owner's, and never manages
// accounts or tokens.
func TestTokenLevelCapsActions(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	ada := newBrowser(t, f.srv.URL)
	ada.login("ada", "right-password")
	tok := mintToken(t, ada, "reader", "viewer", "1d")
	form := url.Values{"kind": {"delete-key"}, "conn": {"main"}, "db": {"3"}, "key": {"k"}}
	if code, _, body := bearer(t, f.srv.URL, http.MethodPost, "/actions/preview", tok, form); code != http.StatusForbidden {
		t.Fatalf("viewer token previewing a delete: %d %.200s", code, body)
	}
	if code, _, _ := bearer(t, f.srv.URL, http.MethodGet, "/c/main", tok, nil); code != http.StatusOK {
		t.Fatalf("viewer token reading: %d", code)
	}
	for _, r := range []struct{ method, path string }{{"GET", "/account/tokens"}, {"POST", "/account/tokens"}, {"GET", "/account"}, {"POST", "/logout"}} {
		if code, hdr, _ := bearer(t, f.srv.URL, r.method, r.path, tok, url.Values{"name": {"more"}, "role": {"viewer"}, "expires": {"never"}, "confirm": {"yes"}}); code != http.StatusForbidden || len(hdr.Values("Set-Cookie")) != 0 {
			t.Fatalf("token %s %s: %d %q, want 403 and no cookie", r.method, r.path, code, hdr.Values("Set-Cookie"))
		}
	}
}

// An unknown, revoked or malformed token is 401: problem+json for API
// paths and JSON clients, a page otherwise; never read from the URL.
func TestTokenRefusedIs401Problem(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	sam := newBrowser(t, f.srv.URL)
	sam.login("sam", "right-password")
	tok := mintToken(t, sam, "ci", "support", "never")
	revoked := mintToken(t, sam, "old", "viewer", "90d")
	code, _, body := sam.do(http.MethodPost, "/account/tokens/revoke", url.Values{"_csrf": {sam.csrf("/account/tokens")}, "name": {"old"}})
	if code != http.StatusOK || !strings.Contains(body, `data-testid="confirm-revoke-token"`) {
		t.Fatalf("revoke without confirmation: %d", code)
	}
	if code, _, _ := bearer(t, f.srv.URL, http.MethodGet, "/c/main", revoked, nil); code != http.StatusOK {
		t.Fatalf("a revoke awaiting confirmation already revoked: %d", code)
	}
	code, _, body = sam.do(http.MethodPost, "/account/tokens/revoke", url.Values{"_csrf": {sam.csrf("/account/tokens")}, "name": {"old"}, "confirm": {"yes"}})
	if code != http.StatusOK || !strings.Contains(body, `data-testid="tokens-done"`) {
		t.Fatalf("revoke: %d %.300s", code, body)
	}
	for _, c := range []struct{ path, token, accept string }{
		{"/c/main", revoked, "application/json"}, {"/api/v1/connections", "kdt_" + strings.Repeat("A", 43), ""},
		{"/c/main", tok + "x", "application/json"}, {"/api/v1/connections", "not-a-token", "application/json"},
	} {
		code, hdr, body := bearer(t, f.srv.URL, http.MethodGet, c.path, c.token, nil, "Accept", c.accept)
		var p map[string]any
		err := json.Unmarshal([]byte(body), &p)
		if code != http.StatusUnauthorized || hdr.Get("Content-Type") != "application/problem+json" || err != nil ||
			p["type"] == nil || p["title"] == nil || p["status"] != float64(401) || p["detail"] == nil || len(hdr.Values("Set-Cookie")) != 0 {
			t.Fatalf("%s with a bad token: %d %q %s", c.path, code, hdr.Get("Content-Type"), body)
		}
	}
	if code, hdr, _ := bearer(t, f.srv.URL, http.MethodGet, "/c/main", revoked, nil, "Accept", "text/html"); code != http.StatusUnauthorized || !strings.HasPrefix(hdr.Get("Content-Type"), "text/html") {
		t.Fatalf("a page with a revoked token: %d %q", code, hdr.Get("Content-Type"))
	}
	// Never from a query string or a form.
	if code, _, _ := bearer(t, f.srv.URL, http.MethodGet, "/c/main?access_token="+url.QueryEscape(tok)+"&authorization="+url.QueryEscape("Bearer "+tok), "", nil); code != http.StatusSeeOther {
		t.Fatalf("a token in the query string: %d, want the sign-in redirect", code)
	}
	if code, _, _ := bearer(t, f.srv.URL, http.MethodPost, "/actions/preview", "", url.Values{"access_token": {tok}, "Authorization": {"Bearer " + tok}, "kind": {"delete-key"}}); code != http.StatusUnauthorized && code != http.StatusForbidden {
		t.Fatalf("a token in a form: %d", code)
	}
}

// Failed token guesses count against the address like failed sign-ins:
// past the limit the address is refused, even with a good token.
func TestTokenGuessesAreLimited(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	sam := newBrowser(t, f.srv.URL)
	sam.login("sam", "right-password")
	tok := mintToken(t, sam, "ci", "viewer", "30d")
	for i := range 5 {
		if code, _, _ := bearer(t, f.srv.URL, http.MethodGet, "/c/main", "kdt_guess"+strings.Repeat("x", i), nil); code != http.StatusUnauthorized {
			t.Fatalf("guess %d: %d", i+1, code)
		}
	}
	code, hdr, _ := bearer(t, f.srv.URL, http.MethodGet, "/c/main", tok, nil, "Accept", "application/json")
	if code != http.StatusTooManyRequests || hdr.Get("Retry-After") == "" || hdr.Get("Content-Type") != "application/problem+json" {
		t.Fatalf("a good token after 5 bad guesses from its address: %d %q", code, hdr.Get("Retry-After"))
	}
	_, _, acct := newBrowserAs(t, f, "ada").do(http.MethodGet, "/account", nil)
	if !strings.Contains(acct, "(API tokens)") {
		t.Fatal("the token lock-out is not listed on the admin's account page")
	}
}

func newBrowserAs(t *testing.T, f *console, user string) *browser {
	b := newBrowser(t, f.srv.URL)
	if code := b.login(user, "right-password"); code != http.StatusSeeOther {
		t.Fatalf("sign in %s: %d", user, code)
	}
	return b
}

// The form: each field's error, the confirmation, the token shown once,
// a name unique per owner, the list with its last use.
func TestTokenAccountForm(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	sam := newBrowserAs(t, f, "sam")
	_, _, acct := sam.do(http.MethodGet, "/account", nil)
	if !strings.Contains(acct, `href="/account/tokens"`) {
		t.Fatal("the account page does not link to the tokens")
	}
	csrf := sam.csrf("/account/tokens")
	code, _, body := sam.do(http.MethodPost, "/account/tokens", url.Values{"_csrf": {csrf}, "name": {""}, "role": {"admin"}, "expires": {"soon"}, "confirm": {"yes"}})
	for _, id := range []string{"token-name-error", "token-role-error", "token-expires-error"} {
		if !strings.Contains(body, `data-testid="`+id+`"`) {
			t.Errorf("no %s: %.600s", id, body)
		}
	}
	if code != http.StatusBadRequest || tokenSecretRe.MatchString(body) {
		t.Fatalf("an invalid form: %d", code)
	}
	if !strings.Contains(body, "at most that") {
		t.Fatal("a support asking for an admin token is not told why not")
	}
	tok := mintToken(t, sam, "nightly <check>", "support", "2030-01-01")
	code, _, body = sam.do(http.MethodPost, "/account/tokens", url.Values{"_csrf": {csrf}, "name": {"nightly <check>"}, "role": {"viewer"}, "expires": {"1d"}, "confirm": {"yes"}})
	if code != http.StatusConflict || !strings.Contains(body, `data-testid="token-name-error"`) {
		t.Fatalf("a second token of the same name: %d", code)
	}
	_, _, list := sam.do(http.MethodGet, "/account/tokens", nil)
	if strings.Contains(list, tok) || !strings.Contains(list, "nightly &lt;check&gt;") || !strings.Contains(list, "never used") {
		t.Fatalf("the list: %.800s", list)
	}
	bearer(t, f.srv.URL, http.MethodGet, "/", tok, nil)
	if _, _, list = sam.do(http.MethodGet, "/account/tokens", nil); strings.Contains(list, "never used") {
		t.Fatal("the list shows no last use after the token was used")
	}
	// Another person does not see sam's tokens (an admin does, in
	// everyone's: TestAdminListsAndRevokesEveryonesTokens).
	if _, _, other := newBrowserAs(t, f, "vera").do(http.MethodGet, "/account/tokens", nil); strings.Contains(other, "nightly") {
		t.Fatal("vera sees sam's token")
	}
}

// Open mode offers no tokens, and says why.
func TestTokenPageInOpenMode(t *testing.T) {
	t.Parallel()
	f := startConsole(t, redistest.Start(t), server.Config{Auth: handlers.Auth{Secret: []byte(testSecret)}}, nil)
	code, _, body := get(t, f.srv.URL+"/account/tokens")
	if code != http.StatusOK || !strings.Contains(body, `data-testid="tokens-unavailable"`) || !strings.Contains(body, "open mode") || strings.Contains(body, `data-testid="create-token"`) {
		t.Fatalf("open mode: %d %.500s", code, body)
	}
	if code, _, _ := bearer(t, f.srv.URL, http.MethodGet, "/", "kdt_"+strings.Repeat("A", 43), nil); code != http.StatusUnauthorized {
		t.Fatalf("a bearer token in open mode: %d", code)
	}
}

// Behind a proxy that names the role, a token is bounded by the role the
// person holds now, not by the users file's: ada, an admin in the file
// whom the proxy calls a viewer, could mint an admin token.
func TestTokenRoleBoundedByTheProxysRole(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, func(a *handlers.Auth) {
		a.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
		a.RoleHeader = "X-Forwarded-Role"
	})
	ada := behindProxy(t, f.srv.URL, "X-Forwarded-User", "ada", "X-Forwarded-Role", "viewer")
	_, _, page := ada.do(http.MethodGet, "/account/tokens", nil)
	if strings.Contains(page, `value="admin"`) || strings.Contains(page, `value="support"`) {
		t.Errorf("a viewer is offered tokens above viewer: %.1200s", page)
	}
	csrf := ada.csrf("/account/tokens")
	code, _, body := ada.do(http.MethodPost, "/account/tokens", url.Values{"_csrf": {csrf}, "name": {"escalate"}, "role": {"admin"}, "expires": {"1d"}, "confirm": {"yes"}})
	if code != http.StatusBadRequest || tokenSecretRe.MatchString(body) || !strings.Contains(body, "at most that") {
		t.Fatalf("a viewer asking for an admin token: %d %.600s", code, body)
	}
}

// A bearer request carries no cookie either way: it cannot sign in (its
// CSRF exemption once let it POST /login and get a session cookie).
func TestTokenCannotSignIn(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	tok := mintToken(t, newBrowserAs(t, f, "sam"), "no-login", "viewer", "1d")
	code, hdr, _ := bearer(t, f.srv.URL, http.MethodPost, "/login", tok, url.Values{"user": {"sam"}, "username": {"sam"}, "password": {"right-password"}})
	if code != http.StatusForbidden || len(hdr.Values("Set-Cookie")) != 0 {
		t.Fatalf("a bearer POST /login: %d, cookies %q", code, hdr.Values("Set-Cookie"))
	}
}

// Without a token store (open mode), an admin's revoke is refused with
// the reason, not a recovered panic.
func TestRevokeTokenWithoutATokenStore(t *testing.T) {
	t.Parallel()
	f := startConsole(t, redistest.Start(t), server.Config{Auth: handlers.Auth{Secret: []byte(testSecret)}}, nil)
	c := newAPIClient(t, f)
	b := c.b
	form := url.Values{"_csrf": {c.csrf}, "owner": {"x"}, "name": {"y"}, "confirm": {"yes"}}
	code, _, body := b.do(http.MethodPost, route.RevokeToken, form)
	if code != http.StatusNotFound || !strings.Contains(body, "open mode") {
		t.Fatalf("revoke in open mode: %d, want 404 saying why: %.500s", code, body)
	}
}
