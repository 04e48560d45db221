package handlers_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/keydeck/keydeck/internal/route"
)

// An admin sees every user's tokens on /account/tokens (name, owner, role,
// dates, last use — never a secret) and may revoke any, after a
// confirmation; nobody else may revoke another's token.
func TestAdminListsAndRevokesEveryonesTokens(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	sam := newBrowserAs(t, f, "sam")
	tok := mintToken(t, sam, "nightly <ci>", "viewer", "30d")
	ada := newBrowserAs(t, f, "ada")
	_, _, page := ada.do(http.MethodGet, route.AccountTokens, nil)
	if !strings.Contains(page, `data-testid="everyones-tokens"`) || !strings.Contains(page, "nightly &lt;ci&gt;") || strings.Contains(page, tok) {
		t.Fatalf("the admin does not see sam's token (or sees its secret): %.2000s", page)
	}
	// sam may not revoke another's token.
	if code, _, _ := sam.do(http.MethodPost, route.RevokeToken, url.Values{"_csrf": {sam.csrf(route.AccountTokens)}, "owner": {"ada"}, "name": {"x"}, "confirm": {"yes"}}); code != http.StatusForbidden {
		t.Fatalf("a support revoking ada's token: %d, want 403", code)
	}
	form := url.Values{"_csrf": {ada.csrf(route.AccountTokens)}, "owner": {"sam"}, "name": {"nightly <ci>"}}
	code, _, body := ada.do(http.MethodPost, route.RevokeToken, form)
	if code != http.StatusOK || !strings.Contains(body, `data-testid="confirm-revoke-token"`) || !strings.Contains(body, `name="owner" value="sam"`) {
		t.Fatalf("the revoke of sam's token is not confirmed first: %d %.1500s", code, body)
	}
	if code, _, _ := bearer(t, f.srv.URL, http.MethodGet, "/api/v1/connections", tok, nil); code != http.StatusOK {
		t.Fatalf("sam's token before the confirmation: %d", code)
	}
	form.Set("confirm", "yes")
	if code, _, body := ada.do(http.MethodPost, route.RevokeToken, form); code != http.StatusOK || !strings.Contains(body, "revoked") {
		t.Fatalf("ada revokes sam's token: %d %.600s", code, body)
	}
	if code, _, _ := bearer(t, f.srv.URL, http.MethodGet, "/api/v1/connections", tok, nil); code != http.StatusUnauthorized {
		t.Fatalf("sam's token after an admin revoked it: %d, want 401", code)
	}
}
