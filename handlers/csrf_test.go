package handlers_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/keydeck/keydeck/handlers"
)

// A CSRF cookie planted in the victim's browser (with the anonymous token
// that goes with it) does not make a form the victim's session accepts: the
// token is bound to the session too.
func TestCSRFTokenBoundToSession(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	f.redis.Client(3).Set(context.Background(), "server:wallpaper-detail::9:a:1", "{}", time.Minute)
	attacker := newBrowser(t, f.srv.URL)
	plantedTok := attacker.csrf("/login")
	u, _ := url.Parse(f.srv.URL)
	var planted string
	for _, ck := range attacker.c.Jar.Cookies(u) {
		if ck.Name == handlers.CSRFCookie {
			planted = ck.Value
		}
	}
	victim := newBrowser(t, f.srv.URL)
	if code := victim.login("ada", "right-password"); code != http.StatusSeeOther {
		t.Fatalf("login: %d", code)
	}
	var session string
	for _, ck := range victim.c.Jar.Cookies(u) {
		if ck.Name == handlers.SessionCookie {
			session = ck.Value
		}
	}
	form := url.Values{"_csrf": {plantedTok}, "kind": {"delete-key"}, "conn": {"main"}, "db": {"3"}, "key": {"server:wallpaper-detail::9:a:1"}}
	req, _ := http.NewRequest(http.MethodPost, f.srv.URL+"/actions/preview", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", f.srv.URL)
	req.Header.Set("Cookie", handlers.SessionCookie+"="+session+"; "+handlers.CSRFCookie+"="+planted)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusForbidden {
		t.Fatalf("planted CSRF cookie and anonymous token with the victim's session: %d, want 403", res.StatusCode)
	}
	// The victim's own page token still works.
	tok := victim.csrf("/c/main")
	form.Set("_csrf", tok)
	if code, _, body := victim.do(http.MethodPost, "/actions/preview", form); code != http.StatusOK {
		t.Fatalf("the session's own token: %d %.200s", code, body)
	}
}
