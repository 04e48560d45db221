package handlers_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"log/slog"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"golang.org/x/crypto/bcrypt"

	"github.com/keydeck/keydeck/handlers"
	"github.com/keydeck/keydeck/internal/people"
	"github.com/keydeck/keydeck/internal/route"
)

// A token minted before owner binding is refused (401) and kept: it is
// dead (nothing tells which password it was made under), never bound by a
// lookup nor deleted by one.
func TestLegacyTokenIsRefusedAndKept(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	secret := people.TokenPrefix + base64.RawURLEncoding.EncodeToString(b)
	sum := sha256.Sum256([]byte(secret))
	d := hex.EncodeToString(sum[:])
	ctx := context.Background()
	audit := f.redis.Client(15)
	now := strconv.FormatInt(time.Now().UnixMilli(), 10)
	audit.HSet(ctx, "keydeck:token:"+d, "name", "old-ci", "owner", "sam", "level", "viewer", "created", now, "expires", "0", "last_used", "0")
	audit.HSet(ctx, "keydeck:tokens:sam", "old-ci", d)
	if code, _, body := bearer(t, f.srv.URL, http.MethodGet, "/api/v1/connections", secret, nil); code != http.StatusUnauthorized {
		t.Fatalf("a token minted before owner binding: %d, want 401: %.300s", code, body)
	}
	if audit.HExists(ctx, "keydeck:token:"+d, "binding").Val() || audit.Exists(ctx, "keydeck:token:"+d).Val() != 1 {
		t.Fatal("the legacy token was bound or deleted by its use")
	}
}

// A token whose account has another password since is dead: "Your
// tokens" and the admin's "Everyone's tokens" say so, the account page
// does not count it among the tokens sign-out would revoke, and its name
// is free for a new token.
func TestDeadTokensAreMarkedInLists(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "users.yaml")
	writeUsersFile(t, path, "users:\n"+usersEntry("sam", "support")+usersEntry("ada", "admin"))
	users, err := people.LoadUsers(path)
	if err != nil {
		t.Fatal(err)
	}
	f := newAuthFixture(t, nil, func(a *handlers.Auth) { a.Users = users })
	sam := newBrowserAs(t, f, "sam")
	mintToken(t, sam, "ci", "viewer", "30d")
	// The same password hashed again: another account for the token.
	again, _ := bcrypt.GenerateFromPassword([]byte("right-password"), bcrypt.MinCost)
	writeUsersFile(t, path, "users:\n  - name: sam\n    role: support\n    password_hash: \""+string(again)+"\"\n"+usersEntry("ada", "admin"))
	if err := users.Reload(false, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	sam = newBrowserAs(t, f, "sam")
	_, _, page := sam.do(http.MethodGet, route.AccountTokens, nil)
	if dead := rowText(t, page, `[data-testid="token"]`, "ci"); !strings.Contains(dead, "no longer valid: password changed") {
		t.Fatalf("sam's token after a new password is listed as alive: %q", dead)
	}
	_, _, account := sam.do(http.MethodGet, route.Account, nil)
	if !strings.Contains(account, "Also revoke your 0 API tokens and the 1 no longer valid") {
		t.Fatalf("the dead token is counted on the account page: %.2000s", account)
	}
	ada := newBrowserAs(t, f, "ada")
	_, _, page = ada.do(http.MethodGet, route.AccountTokens, nil)
	if dead := rowText(t, page, `[data-testid="everyones-token"]`, "ci"); !strings.Contains(dead, "no longer valid: password changed") {
		t.Fatalf("the admin's list shows sam's dead token as alive: %q", dead)
	}
	// Its name stays taken until it is revoked (another replica's users
	// file may be behind, where it is live): then a new token takes it.
	tok := sam.csrf(route.AccountTokens)
	if code, _, body := sam.do(http.MethodPost, route.AccountTokens, url.Values{"_csrf": {tok}, "name": {"ci"}, "role": {"viewer"}, "expires": {"30d"}, "confirm": {"yes"}}); code != http.StatusConflict || !strings.Contains(body, "no longer works: revoke it first") {
		t.Fatalf("a new token named as the dead one: %d %.300s", code, body)
	}
	if code, _, body := sam.do(http.MethodPost, route.RevokeToken, url.Values{"_csrf": {tok}, "name": {"ci"}, "confirm": {"yes"}}); code != http.StatusOK {
		t.Fatalf("revoking the dead token: %d %.300s", code, body)
	}
	secret := mintToken(t, sam, "ci", "viewer", "30d")
	if code, _, _ := bearer(t, f.srv.URL, http.MethodGet, "/api/v1/connections", secret, nil); code != http.StatusOK {
		t.Fatalf("the new token named as the dead one: %d", code)
	}
	_, _, page = sam.do(http.MethodGet, route.AccountTokens, nil)
	if row := rowText(t, page, `[data-testid="token"]`, "ci"); strings.Contains(row, "no longer valid") {
		t.Fatalf("the new token is listed dead (or the dead one stayed): %q", row)
	}
}

// rowText is the text of the rows matching sel whose first cell is name.
func rowText(t *testing.T, page, sel, name string) string {
	t.Helper()
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	doc.Find(sel).Each(func(_ int, s *goquery.Selection) {
		if strings.TrimSpace(s.Find("td").First().Contents().First().Text()) == name {
			out = append(out, s.Text())
		}
	})
	if len(out) == 0 {
		t.Fatalf("no row %q matching %s in: %.2000s", name, sel, page)
	}
	return strings.Join(out, " | ")
}
