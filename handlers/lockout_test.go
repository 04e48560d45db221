package handlers_test

import (
	"context"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/keydeck/keydeck/handlers"
)

// loginFrom signs in as user with pw, the trusted proxy saying the client
// is addr.
func (b *browser) loginFrom(addr, user, pw string) int {
	b.t.Helper()
	tok := b.csrf("/login")
	code, _, _ := b.do(http.MethodPost, "/login", url.Values{"_csrf": {tok}, "username": {user}, "password": {pw}, "next": {"/"}}, "X-Forwarded-For", addr)
	return code
}

// Wrong passwords from one address lock that address out of the account,
// not the account: its owner signs in from another address at once.
func TestLockoutIsPerAddress(t *testing.T) {
	f := newAuthFixture(t, nil, func(a *handlers.Auth) {
		a.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	})
	mallory := newBrowser(t, f.srv.URL)
	for i := range 5 {
		if code := mallory.loginFrom("203.0.113.66", "ada", "guess"); code != http.StatusUnauthorized {
			t.Fatalf("guess %d: %d", i, code)
		}
	}
	if code := mallory.loginFrom("203.0.113.66", "ada", "right-password"); code != http.StatusTooManyRequests {
		t.Fatalf("the locked-out address with the right password: %d, want 429", code)
	}
	ada := newBrowser(t, f.srv.URL)
	if code := ada.loginFrom("198.51.100.7", "ada", "right-password"); code != http.StatusSeeOther {
		t.Fatalf("ada from her own address: %d, want 303 (signed in)", code)
	}
	// The lock-out of mallory's address stays.
	if code := mallory.loginFrom("203.0.113.66", "ada", "right-password"); code != http.StatusTooManyRequests {
		t.Fatalf("the locked-out address after ada signed in: %d, want 429", code)
	}
	_ = context.Background
	_ = strings.Contains
}
