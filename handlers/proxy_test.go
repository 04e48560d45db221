package handlers_test

import (
	"context"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/keydeck/keydeck/handlers"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview/action"
)

var whoamiRe = regexp.MustCompile(`data-testid="whoami">([^<]*)<span[^>]*>([^<]*)</span>`)

// whoami returns the user and role a page shows for the proxy headers hdr.
func whoami(t *testing.T, base string, hdr ...string) (user, role string) {
	t.Helper()
	code, _, body := newBrowser(t, base).do(http.MethodGet, "/c/main", nil, hdr...)
	m := whoamiRe.FindStringSubmatch(body)
	if code != http.StatusOK || m == nil {
		t.Fatalf("GET /c/main with %q: %d, no whoami", hdr, code)
	}
	return m[1][:len(m[1])-1], m[2]
}

// A proxy identity is matched by one configured field: a user header naming
// mallory does not borrow ada's role through ada's e-mail address.
func TestProxyMatchesOneField(t *testing.T) {
	t.Parallel()
	proxied := func(match string) func(*handlers.Auth) {
		return func(a *handlers.Auth) {
			a.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
			a.ProxyMatch = match
		}
	}
	byName := newAuthFixture(t, nil, proxied(""))
	tests := []struct {
		base     string
		hdr      []string
		wantUser string
		wantRole string
	}{
		{byName.srv.URL, []string{"X-Forwarded-User", "mallory", "X-Forwarded-Email", "ADA@example.com"}, "mallory", "viewer"},
		{byName.srv.URL, []string{"X-Forwarded-User", "ada"}, "ada", "admin"},
		{byName.srv.URL, []string{"X-Forwarded-Email", "ada@example.com"}, "ada@example.com", "viewer"},
	}
	byEmail := newAuthFixture(t, byName.redis, proxied("email"))
	tests = append(tests, []struct {
		base     string
		hdr      []string
		wantUser string
		wantRole string
	}{
		{byEmail.srv.URL, []string{"X-Forwarded-User", "mallory", "X-Forwarded-Email", "ADA@example.com"}, "ada", "admin"},
		{byEmail.srv.URL, []string{"X-Forwarded-User", "ada", "X-Forwarded-Email", "mallory@example.com"}, "ada", "viewer"},
		{byEmail.srv.URL, []string{"X-Forwarded-User", "ada"}, "ada", "viewer"},
	}...)
	for _, tt := range tests {
		user, role := whoami(t, tt.base, tt.hdr...)
		if user != tt.wantUser || role != tt.wantRole {
			t.Errorf("%q: signed in as %s (%s), want %s (%s)", tt.hdr, user, role, tt.wantUser, tt.wantRole)
		}
	}
}

var hxTokenRe = regexp.MustCompile(`X-CSRF-Token&#34;:&#34;([^&]+)&#34;`)

// pageToken is the CSRF token a page gives its scripts (every page has
// one, with or without a form on it).
func pageToken(t *testing.T, page string) string {
	t.Helper()
	m := hxTokenRe.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no CSRF token on the page: %.300s", page)
	}
	return m[1]
}

// proxyGet sends GET path from a trusted proxy with hdr, each pair added
// (so a name given twice is sent twice), and returns the status and body.
func proxyGet(t *testing.T, base, path string, hdr ...string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+path, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Add(hdr[i], hdr[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// With --proxy-match email, a user header naming ada without ada's e-mail
// is an unmatched viewer that happens to be called "ada": it acts in its
// own namespace and cannot end the real ada's sessions.
func TestUnmatchedProxyIdentityCannotSignOutAccount(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, func(a *handlers.Auth) {
		a.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
		a.ProxyMatch = "email"
	})
	ada := newBrowser(t, f.srv.URL)
	if code := ada.login("ada", "right-password"); code != http.StatusSeeOther {
		t.Fatalf("ada signs in: %d", code)
	}
	for _, tt := range []struct {
		name string
		hdr  []string
		form url.Values
	}{
		{"own name, no e-mail", []string{"X-Forwarded-User", "ada"}, url.Values{}},
		{"own name, named", []string{"X-Forwarded-User", "ada"}, url.Values{"user": {"ada"}}},
		{"another e-mail", []string{"X-Forwarded-User", "ada", "X-Forwarded-Email", "mallory@example.com"}, url.Values{"user": {"ada"}}},
	} {
		mallory := newBrowser(t, f.srv.URL)
		_, _, page := mallory.do(http.MethodGet, "/account", nil, tt.hdr...)
		tt.form.Set("_csrf", pageToken(t, page))
		code, _, body := mallory.do(http.MethodPost, "/account/sign-out-everywhere", tt.form, tt.hdr...)
		if code != http.StatusForbidden && code != http.StatusBadRequest {
			t.Errorf("%s: sign out ada everywhere: %d, want 403 or 400 (%.200s)", tt.name, code, body)
		}
		if code, _, _ := ada.do(http.MethodGet, "/c/main", nil); code != http.StatusOK {
			t.Fatalf("%s: ada's own session ended: %d", tt.name, code)
		}
	}
	// ada herself through the proxy (matched by her e-mail) still may.
	self := newBrowser(t, f.srv.URL)
	hdr := []string{"X-Forwarded-User", "whatever", "X-Forwarded-Email", "ada@example.com"}
	_, _, page := self.do(http.MethodGet, "/account", nil, hdr...)
	if code, _, body := self.do(http.MethodPost, "/account/sign-out-everywhere", url.Values{"_csrf": {pageToken(t, page)}, "user": {"ada"}}, hdr...); code != http.StatusOK {
		t.Fatalf("matched ada signs herself out everywhere: %d (%.200s)", code, body)
	}
}

// Two copies of an identity header are refused, not decided by the first.
func TestDuplicateIdentityHeaderRefused(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, func(a *handlers.Auth) {
		a.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
		a.RoleHeader = "X-Forwarded-Role"
	})
	tests := []struct {
		name string
		hdr  []string
		want int
	}{
		{"one of each", []string{"X-Forwarded-User", "ada", "X-Forwarded-Email", "ada@example.com", "X-Forwarded-Role", "viewer"}, http.StatusOK},
		{"two users", []string{"X-Forwarded-User", "ada", "X-Forwarded-User", "mallory"}, http.StatusBadRequest},
		{"two users, other spelling", []string{"X-Forwarded-User", "mallory", "x-forwarded-user", "ada"}, http.StatusBadRequest},
		{"two e-mails", []string{"X-Forwarded-User", "ada", "X-Forwarded-Email", "a@example.com", "X-Forwarded-Email", "ada@example.com"}, http.StatusBadRequest},
		{"two roles", []string{"X-Forwarded-User", "ada", "X-Forwarded-Role", "viewer", "X-Forwarded-Role", "admin"}, http.StatusBadRequest},
		{"an empty second copy", []string{"X-Forwarded-User", "ada", "X-Forwarded-User", ""}, http.StatusBadRequest},
	}
	for _, tt := range tests {
		if code, body := proxyGet(t, f.srv.URL, "/c/main", tt.hdr...); code != tt.want {
			t.Errorf("%s: %d, want %d (%.200s)", tt.name, code, tt.want, body)
		}
	}
}

// headerTransport adds fixed headers to every request, as a trusted
// proxy in front of the console does.
type headerTransport struct {
	hdr http.Header
	rt  http.RoundTripper
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, vs := range h.hdr {
		r.Header[k] = vs
	}
	return h.rt.RoundTrip(r)
}

// behindProxy is a browser whose every request the proxy marks with hdr.
func behindProxy(t *testing.T, base string, hdr ...string) *browser {
	b := newBrowser(t, base)
	h := http.Header{}
	for i := 0; i+1 < len(hdr); i += 2 {
		h.Set(hdr[i], hdr[i+1])
	}
	b.c.Transport = headerTransport{hdr: h, rt: http.DefaultTransport}
	return b
}

// An unmatched proxy identity that happens to be called "ada" acts, and
// is audited, under a name no account can have: given a role by the
// proxy it may ban, but the audit does not say the account ada did it.
func TestUnmatchedProxyIdentityAuditedApart(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, func(a *handlers.Auth) {
		a.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
		a.ProxyMatch = "email"
		a.RoleHeader = "X-Forwarded-Role"
	})
	seedBans(t, f, "someone")
	mallory := behindProxy(t, f.srv.URL, "X-Forwarded-User", "ada", "X-Forwarded-Role", "support")
	_, _, page := mallory.do(http.MethodGet, route.UserURL("main", "target"), nil)
	followLink(t, mallory, linkFor(t, page, "user-ban-action", "name", "target"))
	recs, _, err := f.run.ReadAudit(context.Background(), action.Filter{Action: action.KindBan, Limit: 2})
	if err != nil || len(recs) != 2 {
		t.Fatalf("audit: %v %d records", err, len(recs))
	}
	for _, r := range recs {
		if r.User == "ada" || !strings.Contains(r.User, "ada") {
			t.Fatalf("the unmatched proxy identity ada is audited as %q: want a name telling it apart from the account ada", r.User)
		}
	}
	// The audit page filters by that name, and an admin may undo the ban.
	ada := newBrowser(t, f.srv.URL)
	if code := ada.login("ada", "right-password"); code != http.StatusSeeOther {
		t.Fatalf("ada signs in: %d", code)
	}
	_, _, audit := ada.do(http.MethodGet, "/audit?user="+url.QueryEscape(recs[0].User), nil)
	if !strings.Contains(audit, `data-testid="undo"`) {
		t.Fatalf("the audit page filtered by %q offers the admin no undo", recs[0].User)
	}
}

// The scan budget counts an unmatched proxy "ada" apart from the account
// ada: its searches do not drain her share.
func TestUnmatchedProxyIdentityHasItsOwnScanShare(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, func(a *handlers.Auth) {
		a.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
		a.ProxyMatch = "email"
	})
	f.redis.Client(0).Set(context.Background(), "bulk:1", "x", 0)
	ada := newBrowser(t, f.srv.URL)
	if code := ada.login("ada", "right-password"); code != http.StatusSeeOther {
		t.Fatalf("ada signs in: %d", code)
	}
	mallory := behindProxy(t, f.srv.URL, "X-Forwarded-User", "ada")
	for _, b := range []*browser{ada, mallory} {
		// As JSON the request runs its scans itself.
		if code, _, body := b.do(http.MethodGet, "/c/main/search?q="+url.QueryEscape("bulk:*"), nil, "Accept", "application/json"); code != http.StatusOK {
			t.Fatalf("search: %d %.300s", code, body)
		}
	}
	if g := f.budget("main").Granted; len(g) != 2 {
		t.Fatalf("scan budget identities: %v, want two (the account ada and the unmatched proxy ada)", g)
	}
}
