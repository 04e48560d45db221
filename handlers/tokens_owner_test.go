package handlers_test

import (
	"log/slog"
	"net/http"
	"path/filepath"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/keydeck/keydeck/handlers"
	"github.com/keydeck/keydeck/internal/people"
)

// A user removed from the users file and added again does not get the old
// account's tokens back: tokens of an owner seen gone are revoked for
// good, even when the entry comes back as it was; and a token is bound to
// its owner's password, so an account re-created with a new one (even
// with no reload seeing it gone) does not inherit them.
func TestRemovedOwnersTokensStayRevoked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "users.yaml")
	writeUsersFile(t, path, "users:\n"+usersEntry("sam", "support")+usersEntry("ada", "admin"))
	users, err := people.LoadUsers(path)
	if err != nil {
		t.Fatal(err)
	}
	reload := func(body string) {
		t.Helper()
		writeUsersFile(t, path, body)
		if err := users.Reload(false, slog.New(slog.DiscardHandler)); err != nil {
			t.Fatal(err)
		}
	}
	f := newAuthFixture(t, nil, func(a *handlers.Auth) { a.Users = users })
	samTok := mintToken(t, newBrowserAs(t, f, "sam"), "ci", "viewer", "30d")
	adaTok := mintToken(t, newBrowserAs(t, f, "ada"), "ci", "viewer", "30d")
	if code, _, _ := bearer(t, f.srv.URL, http.MethodGet, "/api/v1/connections", samTok, nil); code != http.StatusOK {
		t.Fatalf("sam's token: %d", code)
	}
	reload("users:\n" + usersEntry("ada", "admin"))
	reload("users:\n" + usersEntry("sam", "support") + usersEntry("ada", "admin"))
	if code, _, _ := bearer(t, f.srv.URL, http.MethodGet, "/api/v1/connections", samTok, nil); code != http.StatusUnauthorized {
		t.Fatalf("sam removed and added again, the same entry: the old token answers %d, want 401", code)
	}
	other, _ := bcrypt.GenerateFromPassword([]byte("another-password"), bcrypt.MinCost)
	reload("users:\n" + usersEntry("sam", "support") + "  - name: ada\n    role: admin\n    password_hash: \"" + string(other) + "\"\n")
	if code, _, _ := bearer(t, f.srv.URL, http.MethodGet, "/api/v1/connections", adaTok, nil); code != http.StatusUnauthorized {
		t.Fatalf("ada re-created with a new password: the old token answers %d, want 401", code)
	}
}
