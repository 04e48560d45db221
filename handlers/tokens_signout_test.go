package handlers_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/keydeck/keydeck/internal/route"
)

// "Sign out everywhere" offers to revoke the API tokens too, ticked by
// default (a person signing out everywhere fears their account is used by
// someone else): ticked, the tokens stop at once; left unticked (an
// admin's choice here), they keep working.
func TestSignOutEverywhereRevokesTokensWhenAsked(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	sam := newBrowserAs(t, f, "sam")
	tok := mintToken(t, sam, "ci", "viewer", "30d")
	mintToken(t, sam, "nightly", "viewer", "30d")
	_, _, page := sam.do(http.MethodGet, route.Account, nil)
	if !strings.Contains(page, `name="revoke_tokens"`) || !strings.Contains(page, "Also revoke your 2 API tokens") {
		t.Fatalf("the sign-out-everywhere form offers no token revocation: %.1500s", page)
	}
	vera := newBrowserAs(t, f, "vera")
	veraTok := mintToken(t, vera, "dash", "viewer", "30d")
	ada := newBrowserAs(t, f, "ada")
	if code, _, body := ada.do(http.MethodPost, route.SignOutEverywhere, url.Values{"_csrf": {ada.csrf(route.Account)}, "user": {"vera"}}); code != http.StatusOK {
		t.Fatalf("ada signs vera out: %d %.300s", code, body)
	}
	if code, _, _ := bearer(t, f.srv.URL, http.MethodGet, "/api/v1/connections", veraTok, nil); code != http.StatusOK {
		t.Fatalf("vera's token after a sign-out without revoking tokens: %d", code)
	}
	code, _, _ := sam.do(http.MethodPost, route.SignOutEverywhere, url.Values{"_csrf": {sam.csrf(route.Account)}, "revoke_tokens": {"yes"}})
	if code != http.StatusSeeOther {
		t.Fatalf("sam signs out everywhere: %d", code)
	}
	if code, _, _ := bearer(t, f.srv.URL, http.MethodGet, "/api/v1/connections", tok, nil); code != http.StatusUnauthorized {
		t.Fatalf("sam's token after signing out everywhere with its revocation: %d, want 401", code)
	}
}

// Revoking all of another person's tokens is irreversible: an admin's
// "sign this user out everywhere" leaves its box unticked, while a
// person's own sign-out-everywhere keeps it ticked.
func TestAdminSignOutDoesNotTickRevokeTokens(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	ada := newBrowserAs(t, f, "ada")
	_, _, page := ada.do(http.MethodGet, route.Account, nil)
	box := regexp.MustCompile(`<input[^>]*data-testid="([^"]*revoke-tokens)"[^>]*>`)
	found := map[string]string{}
	for _, m := range box.FindAllStringSubmatch(page, -1) {
		found[m[1]] = m[0]
	}
	own, other := found["sign-out-revoke-tokens"], found["sign-out-user-revoke-tokens"]
	if own == "" || other == "" {
		t.Fatalf("the two boxes are not both on the admin's account page: %q", found)
	}
	if !strings.Contains(own, "checked") {
		t.Errorf("one's own sign-out-everywhere box is not ticked: %s", own)
	}
	if strings.Contains(other, "checked") {
		t.Errorf("the admin's box to revoke another user's tokens is ticked by default: %s", other)
	}
}
