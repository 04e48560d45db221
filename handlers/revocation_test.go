package handlers_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"golang.org/x/crypto/bcrypt"

	"github.com/keydeck/keydeck/handlers"
	"github.com/keydeck/keydeck/internal/people"
	"github.com/keydeck/keydeck/internal/redistest"
)

// copyOf is another browser holding b's cookies (a stolen or copied
// cookie), talking to base.
func copyOf(t *testing.T, b *browser, base string) *browser {
	t.Helper()
	c := newBrowser(t, base)
	from, _ := url.Parse(b.base)
	to, _ := url.Parse(base)
	c.c.Jar.SetCookies(to, b.c.Jar.Cookies(from))
	return c
}

// dialWS opens a websocket on topic with b's cookies.
func dialWS(t *testing.T, b *browser, topic string) *websocket.Conn {
	t.Helper()
	u, _ := url.Parse(b.base)
	hdr := http.Header{"Origin": {b.base}}
	for _, ck := range b.c.Jar.Cookies(u) {
		hdr.Add("Cookie", ck.Name+"="+ck.Value)
	}
	ws, res, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(b.base, "http")+"/ws?topic="+url.QueryEscape(topic), hdr)
	if err != nil {
		t.Fatalf("websocket %s: %v %v", topic, err, res)
	}
	t.Cleanup(func() { ws.Close() })
	return ws
}

// closedWithin reads ws until the server closes it and returns how long
// that took; it fails the test after limit.
func closedWithin(t *testing.T, ws *websocket.Conn, limit time.Duration) {
	t.Helper()
	start := time.Now()
	_ = ws.SetReadDeadline(start.Add(limit))
	for {
		_, _, err := ws.ReadMessage()
		if err == nil {
			continue
		}
		var ce *websocket.CloseError
		if !errors.As(err, &ce) || ce.Code != websocket.ClosePolicyViolation {
			t.Fatalf("websocket not closed by the server within %v: %v", limit, err)
		}
		return
	}
}

func signedIn(t *testing.T, b *browser) bool {
	t.Helper()
	code, _, _ := b.do(http.MethodGet, "/c/main", nil)
	return code == http.StatusOK
}

// Signing out ends the session everywhere: a copy of the cookie stops
// working on this replica at once and on another within seconds, and an
// open live view on the other replica closes.
func TestLogoutEndsSessionEverywhere(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	a := newAuthFixture(t, rs, nil)
	b := newAuthFixture(t, rs, nil)
	ada := newBrowser(t, a.srv.URL)
	if code := ada.login("ada", "right-password"); code != http.StatusSeeOther {
		t.Fatalf("login: %d", code)
	}
	copyA, copyB := copyOf(t, ada, a.srv.URL), copyOf(t, ada, b.srv.URL)
	if !signedIn(t, copyA) || !signedIn(t, copyB) {
		t.Fatal("the copied cookie does not work before sign-out")
	}
	ws := dialWS(t, copyB, "overview:main")
	tok := ada.csrf("/c/main")
	if code, _, _ := ada.do(http.MethodPost, "/logout", url.Values{"_csrf": {tok}}); code != http.StatusSeeOther {
		t.Fatalf("logout: %d", code)
	}
	if signedIn(t, copyA) {
		t.Fatal("the old cookie still works on the replica that signed it out")
	}
	within(t, 3*time.Second, "the old cookie stops working on the other replica", func() bool { return !signedIn(t, copyB) })
	closedWithin(t, ws, 5*time.Second)
}

// An admin signs a user out everywhere; the user may sign in again.
// A user may sign themselves out everywhere, but not someone else.
func TestSignOutEverywhere(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	a := newAuthFixture(t, rs, nil)
	b := newAuthFixture(t, rs, nil)
	vera1, vera2 := newBrowser(t, a.srv.URL), newBrowser(t, b.srv.URL)
	for _, v := range []*browser{vera1, vera2} {
		if code := v.login("vera", "right-password"); code != http.StatusSeeOther {
			t.Fatalf("login: %d", code)
		}
	}
	ws := dialWS(t, vera2, "overview:main")

	// vera may not sign ada out.
	code, _, _ := vera1.do(http.MethodPost, "/account/sign-out-everywhere", url.Values{"_csrf": {vera1.csrf("/account")}, "user": {"ada"}})
	if code != http.StatusForbidden {
		t.Fatalf("a viewer signing out an admin: %d", code)
	}
	if _, _, page := vera1.do(http.MethodGet, "/account", nil); !strings.Contains(page, `data-testid="sign-out-everywhere"`) || strings.Contains(page, `data-testid="sign-out-user"`) {
		t.Fatal("a viewer's account page: want her own sign-out-everywhere and no admin form")
	}

	ada := newBrowser(t, a.srv.URL)
	ada.login("ada", "right-password")
	_, _, page := ada.do(http.MethodGet, "/account", nil)
	if !strings.Contains(page, `data-testid="sign-out-user"`) {
		t.Fatal("the admin's account page has no form to sign a user out")
	}
	code, _, body := ada.do(http.MethodPost, "/account/sign-out-everywhere", url.Values{"_csrf": {ada.csrf("/account")}, "user": {"vera"}})
	if code != http.StatusOK || !strings.Contains(body, `data-testid="account-done"`) {
		t.Fatalf("sign vera out everywhere: %d %.300s", code, body)
	}
	if signedIn(t, vera1) {
		t.Fatal("vera's session survives on the admin's replica")
	}
	within(t, 3*time.Second, "vera's session ends on the other replica", func() bool { return !signedIn(t, vera2) })
	closedWithin(t, ws, 5*time.Second)
	if !signedIn(t, ada) {
		t.Fatal("the admin was signed out too")
	}
	cutoff := time.Now().UnixMilli() // a new session is issued after the cutoff's millisecond
	redistest.Eventually(t, time.Second, "the next millisecond", func() bool { return time.Now().UnixMilli() > cutoff })
	if code := vera1.login("vera", "right-password"); code != http.StatusSeeOther || !signedIn(t, vera1) {
		t.Fatalf("vera cannot sign in again: %d", code)
	}

	// Oneself, everywhere: this browser too.
	sam := newBrowser(t, a.srv.URL)
	sam.login("sam", "right-password")
	copySam := copyOf(t, sam, b.srv.URL)
	code, hdr, _ := sam.do(http.MethodPost, "/account/sign-out-everywhere", url.Values{"_csrf": {sam.csrf("/account")}})
	if code != http.StatusSeeOther || hdr.Get("Location") != "/login" {
		t.Fatalf("sign oneself out everywhere: %d %q", code, hdr.Get("Location"))
	}
	if signedIn(t, sam) {
		t.Fatal("still signed in after signing out everywhere")
	}
	within(t, 3*time.Second, "sam's copied cookie stops working", func() bool { return !signedIn(t, copySam) })
}

// A demotion in the users file closes the live views the new role may not
// watch, within seconds; a removal closes all of the user's.
func TestUsersFileEditClosesWebsockets(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "users.yaml")
	writeUsersFile(t, path, "users:\n"+usersEntry("ada", "admin")+usersEntry("vera", "viewer"))
	users, err := people.LoadUsers(path)
	if err != nil {
		t.Fatal(err)
	}
	watchUsers(t, users, 100*time.Millisecond, &syncBuf{})
	f := newAuthFixture(t, nil, func(a *handlers.Auth) { a.Users = users })
	ada, vera := newBrowser(t, f.srv.URL), newBrowser(t, f.srv.URL)
	ada.login("ada", "right-password")
	vera.login("vera", "right-password")
	undo := dialWS(t, ada, "audit:undo:")
	plain := dialWS(t, vera, "overview:main")
	writeUsersFile(t, path, "users:\n"+usersEntry("ada", "viewer"))
	closedWithin(t, undo, 5*time.Second)
	closedWithin(t, plain, 5*time.Second)
}

// A user removed and added again under the same name (a new password) does
// not inherit the old account's sessions; a new password ends them too.
func TestNewPasswordEndsSessions(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "users.yaml")
	writeUsersFile(t, path, "users:\n"+usersEntry("ada", "admin"))
	users, err := people.LoadUsers(path)
	if err != nil {
		t.Fatal(err)
	}
	f := newAuthFixture(t, nil, func(a *handlers.Auth) { a.Users = users })
	ada := newBrowser(t, f.srv.URL)
	ada.login("ada", "right-password")
	other, _ := bcrypt.GenerateFromPassword([]byte("another-password"), bcrypt.MinCost)
	writeUsersFile(t, path, "users:\n  - name: ada\n    role: admin\n    password_hash: \""+string(other)+"\"\n")
	if err := users.Reload(false, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	if signedIn(t, ada) {
		t.Fatal("a session survives a new password")
	}
}

// failingStore cannot reach its Redis.
type failingStore struct{}

var errStoreDown = errors.New("connection refused")

func (failingStore) Revoke(context.Context, string, time.Time) error { return errStoreDown }
func (failingStore) RevokeUser(context.Context, string, time.Time, time.Duration) error {
	return errStoreDown
}
func (failingStore) Revoked(context.Context, string, string, time.Time) (bool, error) {
	return false, errStoreDown
}

// With the session store unreachable, sessions are still honoured (the
// console stays usable), but sign-outs fail closed: the user is told the
// session is still valid, and the cookie is kept for a retry.
func TestSignOutFailsClosedWithoutStore(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, func(a *handlers.Auth) { a.Sessions = failingStore{} })
	ada := newBrowser(t, f.srv.URL)
	if code := ada.login("ada", "right-password"); code != http.StatusSeeOther || !signedIn(t, ada) {
		t.Fatalf("sign-in with the store down: %d", code)
	}
	code, hdr, body := ada.do(http.MethodPost, "/logout", url.Values{"_csrf": {ada.csrf("/c/main")}})
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "still signed in") || strings.Contains(hdr.Get("Set-Cookie"), handlers.SessionCookie) {
		t.Fatalf("logout with the store down: %d %q", code, hdr.Get("Set-Cookie"))
	}
	if !signedIn(t, ada) {
		t.Fatal("the session was dropped although the sign-out failed")
	}
	code, _, body = ada.do(http.MethodPost, "/account/sign-out-everywhere", url.Values{"_csrf": {ada.csrf("/account")}, "user": {"vera"}})
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "Nothing was signed out") {
		t.Fatalf("sign-out-everywhere with the store down: %d", code)
	}
}
