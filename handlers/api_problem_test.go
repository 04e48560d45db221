package handlers_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/apiv1"
)

// problemOf checks an RFC 9457 answer of status want, never a redirect.
func problemOf(t *testing.T, c *apiClient, method, path string, body any, want int) apiv1.Problem {
	t.Helper()
	code, out := c.do(method, path, body)
	if code != want {
		t.Fatalf("%s %s: %d, want %d: %s", method, path, code, want, out)
	}
	if ct := c.lastHdr.Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("%s %s: Content-Type %q, want application/problem+json", method, path, ct)
	}
	if loc := c.lastHdr.Get("Location"); loc != "" {
		t.Errorf("%s %s: redirects to %s", method, path, loc)
	}
	var p apiv1.Problem
	if err := json.Unmarshal(out, &p); err != nil {
		t.Fatalf("%s %s: %v: %s", method, path, err, out)
	}
	if p.Status != want || p.Type == "" || p.Title == "" || p.Detail == "" {
		t.Errorf("%s %s: incomplete problem %+v", method, path, p)
	}
	return p
}

// Anonymous API requests get 401 and a role too low 403, as problem
// details, never a redirect to sign in; a bad parameter is 400 and a
// missing connection, key or path 404, with the pages' titles.
func TestAPIProblemsAuth(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	anon := &apiClient{t: t, b: newBrowser(t, f.srv.URL)}
	problemOf(t, anon, http.MethodGet, "/api/v1/connections", nil, http.StatusUnauthorized)
	if got := anon.lastHdr.Get("WWW-Authenticate"); got == "" {
		t.Error("401 without WWW-Authenticate")
	}
	problemOf(t, anon, http.MethodGet, "/api/v1/connections/main/db/0/key?key=x", nil, http.StatusUnauthorized)
	// An anonymous write is told to authenticate, not that its form expired.
	problemOf(t, anon, http.MethodPost, "/api/v1/actions/preview", map[string]any{"kind": "delete-key", "conn": "main", "db": 0, "key": "x"}, http.StatusUnauthorized)

	vera := &apiClient{t: t, b: newBrowser(t, f.srv.URL)}
	if code := vera.b.login("vera", "right-password"); code != http.StatusSeeOther {
		t.Fatalf("login: %d", code)
	}
	vera.csrf = pageCSRF(t, vera)
	vera.getJSON("/api/v1/connections", http.StatusOK, nil)
	p := problemOf(t, vera, http.MethodPost, "/api/v1/actions/preview", map[string]any{"kind": "delete-key", "conn": "main", "db": 0, "key": "x"}, http.StatusForbidden)
	if p.Type != "urn:keydeck:problem:forbidden" {
		t.Errorf("403 type %q", p.Type)
	}
	// A session-cookie write without the CSRF header is refused.
	vera.csrf = "forged"
	problemOf(t, vera, http.MethodPost, "/api/v1/actions/preview", map[string]any{"kind": "delete-key", "conn": "main", "db": 0, "key": "x"}, http.StatusForbidden)
}

func TestAPIProblemsStatuses(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	c := newAPIClient(t, f)
	k := newContract(t, c)
	for _, tc := range []struct {
		op, path string
		want     int
		typ      string
	}{
		{"GET /api/v1/connections/{conn}/ban-check", "/api/v1/connections/nope/ban-check?name=x", 404, "urn:keydeck:problem:no-such-connection"},
		{"GET /api/v1/connections/{conn}/db/{n}/key", "/api/v1/connections/main/db/0/key?key=absent", 404, "urn:keydeck:problem:no-such-key"},
		{"GET /api/v1/connections/{conn}/db/{n}/key", "/api/v1/connections/main/db/07/key?key=x", 404, "urn:keydeck:problem:page-not-found"},
		{"GET /api/v1/connections/{conn}/db/{n}/key", "/api/v1/connections/main/db/0/key?key_b64=!!", 400, "urn:keydeck:problem:bad-request"},
		{"GET /api/v1/connections/{conn}/db/{n}/key", "/api/v1/connections/main/db/0/key?key=x&key_b64=eA", 400, "urn:keydeck:problem:bad-request"},
		{"GET /api/v1/connections/{conn}/db/{n}/leaderboard", "/api/v1/connections/main/db/0/leaderboard?key=x&count=0", 400, "urn:keydeck:problem:bad-request"},
		{"GET /api/v1/connections/{conn}/user", "/api/v1/connections/main/user", 400, "urn:keydeck:problem:bad-request"},
	} {
		p := problemOf(t, c, http.MethodGet, tc.path, nil, tc.want)
		if p.Type != tc.typ {
			t.Errorf("%s: type %q, want %q", tc.path, p.Type, tc.typ)
		}
		_, body := c.do(http.MethodGet, tc.path, nil)
		k.check(tc.op, tc.want, "application/problem+json", body)
	}
	problemOf(t, c, http.MethodGet, "/api/v1/nope", nil, http.StatusNotFound)
	problemOf(t, c, http.MethodPost, "/api/v1/actions/execute", map[string]any{"token": "forged"}, http.StatusBadRequest)
}

// pageCSRF is the CSRF token the console's pages give c's browser.
func pageCSRF(t *testing.T, c *apiClient) string {
	t.Helper()
	_, _, page := c.b.do(http.MethodGet, "/", nil)
	m := hxCSRF.FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no CSRF token on /")
	}
	return m[1]
}

// Names that are not UTF-8, or are markup, cross the API byte for byte:
// in (the query, plain or base64) and out (a string, or {"b64"}).
func TestAPINamesByteExact(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	ctx := context.Background()
	bin, html := "k:\xff\xfe\x00", `<b>"&'</b> `
	db := f.redis.Client(0)
	db.Set(ctx, bin, "1", 0)
	db.Set(ctx, html, "2", 0)
	db.ZAdd(ctx, "board", redis.Z{Score: 2, Member: bin}, redis.Z{Score: 1, Member: html})
	c := newAPIClient(t, f)
	for _, key := range []string{bin, html} {
		for _, param := range []string{
			"key=" + url.QueryEscape(key),
			"key_b64=" + base64.StdEncoding.EncodeToString([]byte(key)),
			"key_b64=" + base64.RawURLEncoding.EncodeToString([]byte(key)),
		} {
			var got struct{ Key apiv1.Name }
			c.getJSON("/api/v1/connections/main/db/0/key?"+param, http.StatusOK, &got)
			if string(got.Key) != key {
				t.Errorf("?%s gave key %q, want %q", param, got.Key, key)
			}
		}
	}
	var lb struct {
		Items []struct{ Member apiv1.Name }
	}
	raw := c.getJSON("/api/v1/connections/main/db/0/leaderboard?key=board", http.StatusOK, &lb)
	if len(lb.Items) != 2 || string(lb.Items[0].Member) != bin || string(lb.Items[1].Member) != html {
		t.Errorf("members %q: %s", lb.Items, raw)
	}
}
