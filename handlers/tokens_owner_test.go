package handlers_test

import (
	"log/slog"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/keydeck/keydeck/handlers"
	"github.com/keydeck/keydeck/internal/clock"
	"github.com/keydeck/keydeck/internal/people"
	"github.com/keydeck/keydeck/internal/redistest"
)

// A user removed from the users file and added again does not get the old
// account's tokens back: tokens of an owner seen gone are revoked for
// good, even when the entry comes back as it was; and a token is bound to
// its owner's password, so an account re-created with a new one (even
// with no reload seeing it gone) does not inherit them.
func TestRemovedOwnersTokensStayRevoked(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "users.yaml")
	writeUsersFile(t, path, "users:\n"+usersEntry("sam", "support")+usersEntry("ada", "admin"))
	c := clock.NewFake(time.Now())
	users, err := people.LoadUsers(path, people.WithClock(c))
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
	c.Advance(people.GoneGrace + time.Second) // sam stayed gone past the grace
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

// A replica whose users file is behind (or was cut off for one reload)
// refuses a token whose owner it does not know, and deletes nothing: the
// token works there once the replica knows its owner again.
func TestTokensOutliveAStaleOrCutOffUsersFile(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	dir := t.TempDir()
	load := func(name, body string) (*people.Users, func(string)) {
		path := filepath.Join(dir, name)
		writeUsersFile(t, path, body)
		u, err := people.LoadUsers(path)
		if err != nil {
			t.Fatal(err)
		}
		return u, func(body string) {
			t.Helper()
			writeUsersFile(t, path, body)
			if err := u.Reload(false, slog.New(slog.DiscardHandler)); err != nil {
				t.Fatal(err)
			}
		}
	}
	both := "users:\n" + usersEntry("ada", "admin") + usersEntry("ci", "support")
	usersA, reloadA := load("a.yaml", both)
	usersB, reloadB := load("b.yaml", "users:\n"+usersEntry("ada", "admin"))
	a := newAuthFixture(t, rs, func(x *handlers.Auth) { x.Users = usersA })
	b := newAuthFixture(t, rs, func(x *handlers.Auth) { x.Users = usersB })
	tok := mintToken(t, newBrowserAs(t, a, "ci"), "deploy", "viewer", "30d")
	if code, _, _ := bearer(t, b.srv.URL, http.MethodGet, "/api/v1/connections", tok, nil); code != http.StatusUnauthorized {
		t.Fatalf("ci unknown to replica B: %d, want 401", code)
	}
	reloadB(both)
	if code, _, body := bearer(t, b.srv.URL, http.MethodGet, "/api/v1/connections", tok, nil); code != http.StatusOK {
		t.Fatalf("replica B now knows ci: %d, want 200: %.300s", code, body)
	}
	// A half-written file drops ci on A for one reload.
	reloadA("users:\n" + usersEntry("ada", "admin"))
	reloadA(both)
	for _, f := range []*console{a, b} {
		if code, _, body := bearer(t, f.srv.URL, http.MethodGet, "/api/v1/connections", tok, nil); code != http.StatusOK {
			t.Fatalf("after a cut-off users file: %d, want 200: %.300s", code, body)
		}
	}
}
