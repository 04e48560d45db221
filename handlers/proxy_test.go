package handlers_test

import (
	"net/http"
	"net/netip"
	"regexp"
	"testing"

	"github.com/keydeck/keydeck/handlers"
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
