package handlers_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/keydeck/keydeck/handlers"
	"github.com/keydeck/keydeck/internal/server"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/redisview/vertique"
)

// The caller finder derives a bucket key with the secret (an HMAC of
// whatever is typed), so it is for support and up: a viewer's lookup is a
// 403 that says why, in HTML and JSON, and the viewer's page offers no
// form; support and admin derive the key. The inventory stays every
// role's.
func TestVertiqueFinderNeedsSupport(t *testing.T) {
	t.Parallel()
	f, _ := opsConsole(t, []byte(vtSecret), func(c *server.Config) {
		c.Auth = handlers.Auth{Users: testUsers(), Secret: []byte(testSecret)}
	})
	fam, _ := vertique.Family(schema.BuiltinPack("vertique"))
	want, _ := vertique.Key(fam, []byte(vtSecret), "login-attempts", "3", vertique.CanonicalKey("alice"))
	const page = "/c/vertique/vertique"
	lookups := []string{
		page + "?policy=login-attempts&revision=3&key=alice&enc=parts",
		page + "?policy=x",            // malformed: still refused for the role first
		page + "?key=anything-at-all", // any finder field is a lookup
	}
	for _, tt := range []struct {
		user   string
		finder bool
	}{{"vera", false}, {"sam", true}, {"ada", true}} {
		b := newBrowser(t, f.srv.URL)
		if code := b.login(tt.user, "right-password"); code != http.StatusSeeOther {
			t.Fatalf("sign in %s: %d", tt.user, code)
		}
		// The page itself: every role; the form only for the finder's.
		code, _, body := b.do(http.MethodGet, page, nil)
		if code != http.StatusOK || !strings.Contains(body, `data-testid="vt-inventory"`) {
			t.Errorf("%s: page %d, inventory shown %v", tt.user, code, strings.Contains(body, `data-testid="vt-inventory"`))
		}
		form, note := strings.Contains(body, `data-testid="vt-form"`), strings.Contains(body, `data-testid="vt-lookup-role"`)
		if form != tt.finder || note == tt.finder {
			t.Errorf("%s: the finder's form offered %v, the role note %v; want the form %v", tt.user, form, note, tt.finder)
		}
		code, _, body = b.do(http.MethodGet, lookups[0], nil)
		_, _, js := b.do(http.MethodGet, lookups[0], nil, "Accept", "application/json")
		if !tt.finder {
			if code != http.StatusForbidden || !strings.Contains(body, "support") || strings.Contains(body, want) || strings.Contains(js, want) {
				t.Errorf("%s: lookup %d, want 403 naming the role it needs and no key: %.600s", tt.user, code, body)
			}
			var e struct { // a problem: find-vertique-bucket's refusal
				Status        int
				Title, Detail string
			}
			if err := json.Unmarshal([]byte(js), &e); err != nil || e.Status != http.StatusForbidden || !strings.Contains(e.Detail, "support") {
				t.Errorf("%s: lookup JSON %s (%v)", tt.user, js, err)
			}
			for _, u := range lookups[1:] {
				if code, _, _ := b.do(http.MethodGet, u, nil); code != http.StatusForbidden {
					t.Errorf("%s: %s: %d, want 403", tt.user, u, code)
				}
			}
			continue
		}
		if code != http.StatusOK || !strings.Contains(body, want) {
			t.Errorf("%s: lookup %d, derived key shown %v", tt.user, code, strings.Contains(body, want))
		}
		if code, _, _ := b.do(http.MethodGet, lookups[1], nil); code != http.StatusBadRequest {
			t.Errorf("%s: a lookup without a revision: %d, want 400", tt.user, code)
		}
	}
}
