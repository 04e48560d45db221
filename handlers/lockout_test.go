package handlers_test

import (
	"encoding/base64"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/keydeck/keydeck/handlers"
	"github.com/keydeck/keydeck/internal/people"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/internal/server"
	"github.com/keydeck/keydeck/redisview"
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
	t.Parallel()
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
}

var refRe = regexp.MustCompile(`name="lockout" value="([^"]+)"`)

// Lock-outs are logged, listed for admins (and only for them) on
// /account, and cleared by an admin after a confirmation, with the form's
// token; the account name is shown escaped, byte-exact.
func TestLockoutsListedAndCleared(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	logs := &syncBuf{}
	cfg := server.Config{Conns: []redisview.ConnConfig{{Name: "main", URL: rs.URL(0)}}, PackFor: map[string]string{"main": "eisland"},
		Auth: handlers.Auth{Users: testUsers(), Secret: []byte(testSecret), TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}}
	f := startConsole(t, rs, cfg, slog.New(slog.NewTextHandler(logs, nil))).up(t)
	const odd = "<b>v\xffra"
	mallory := newBrowser(t, f.srv.URL)
	for range 5 {
		mallory.loginFrom("203.0.113.66", "vera", "guess")
		mallory.loginFrom("203.0.113.66", odd, "guess")
	}
	if !strings.Contains(logs.String(), `msg="sign-in lock-out: this address may not sign in to this account`) || !strings.Contains(logs.String(), "user=vera remote=203.0.113.66 until=") {
		t.Fatalf("lock-out not logged:\n%s", logs)
	}
	vera := newBrowser(t, f.srv.URL)
	if code := vera.loginFrom("198.51.100.7", "vera", "right-password"); code != http.StatusSeeOther {
		t.Fatalf("vera from her address: %d", code)
	}
	if _, _, page := vera.do(http.MethodGet, "/account", nil); strings.Contains(page, `data-testid="lockouts"`) {
		t.Fatal("a viewer sees the lock-outs")
	}
	if code, _, _ := vera.do(http.MethodPost, "/account/clear-lockout", url.Values{"_csrf": {vera.csrf("/account")}, "lockout": {"x"}, "confirm": {"yes"}}); code != http.StatusForbidden {
		t.Fatalf("a viewer clears a lock-out: %d, want 403", code)
	}
	ada := newBrowser(t, f.srv.URL)
	if code := ada.loginFrom("198.51.100.8", "ada", "right-password"); code != http.StatusSeeOther {
		t.Fatalf("ada signs in: %d", code)
	}
	code, _, page := ada.do(http.MethodGet, "/account", nil)
	if code != http.StatusOK || strings.Count(page, `data-testid="lockout"`) != 2 || !strings.Contains(page, "203.0.113.66") {
		t.Fatalf("admin's list: %d %s", code, page)
	}
	if strings.Contains(page, "<b>v") || !strings.Contains(page, `&lt;b&gt;v\xffra`) {
		i := strings.Index(page, "lockouts")
		t.Fatalf("the odd account name is not shown escaped: %s", page[i:])
	}
	refs := refRe.FindAllStringSubmatch(page, -1)
	if len(refs) != 2 {
		t.Fatalf("clear forms: %d", len(refs))
	}
	var veraRef string
	for _, r := range refs {
		if raw, _ := base64.RawURLEncoding.DecodeString(r[1]); string(raw) == "203.0.113.66\x00vera" {
			veraRef = r[1]
		}
	}
	if veraRef == "" {
		t.Fatalf("no clear form for vera's lock-out: %q", refs)
	}
	tok := ada.csrf("/account")
	// Without the form token: refused.
	if code, _, _ := ada.do(http.MethodPost, "/account/clear-lockout", url.Values{"lockout": {veraRef}, "confirm": {"yes"}}); code != http.StatusForbidden {
		t.Fatalf("clear without a token: %d", code)
	}
	// First the confirmation, changing nothing.
	code, _, page = ada.do(http.MethodPost, "/account/clear-lockout", url.Values{"_csrf": {tok}, "lockout": {veraRef}})
	if code != http.StatusOK || !strings.Contains(page, `data-testid="confirm-clear-lockout"`) {
		t.Fatalf("confirmation: %d", code)
	}
	if code := mallory.loginFrom("203.0.113.66", "vera", "guess"); code != http.StatusTooManyRequests {
		t.Fatalf("lock-out gone before the confirmation: %d", code)
	}
	code, _, page = ada.do(http.MethodPost, "/account/clear-lockout", url.Values{"_csrf": {tok}, "lockout": {veraRef}, "confirm": {"yes"}})
	if code != http.StatusOK || !strings.Contains(page, `data-testid="account-done"`) || strings.Count(page, `data-testid="lockout"`) != 1 {
		t.Fatalf("confirmed clear: %d %s", code, page)
	}
	if !strings.Contains(logs.String(), `msg="sign-in lock-out cleared" user=vera remote_locked=203.0.113.66 by=ada`) {
		t.Fatalf("clear not logged:\n%s", logs)
	}
	if code := mallory.loginFrom("203.0.113.66", "vera", "guess"); code != http.StatusUnauthorized {
		t.Fatalf("cleared address: %d, want 401 (tried)", code)
	}
	// The other lock-out stays.
	if code := mallory.loginFrom("203.0.113.66", odd, "guess"); code != http.StatusTooManyRequests {
		t.Fatalf("the other lock-out: %d", code)
	}
}

// A proxy such as HAProxy adds its own X-Forwarded-For line after the one
// the client sent: the lines are one list, walked from the right, so a
// client cannot name a victim's address in a header line of its own and
// lock that address out.
func TestForwardedForSeveralHeaderLines(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, func(a *handlers.Auth) {
		a.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	})
	mallory := newBrowser(t, f.srv.URL)
	login := func(b *browser, pw string, xff ...string) int {
		t.Helper()
		tok := b.csrf("/login")
		form := url.Values{"_csrf": {tok}, "username": {"ada"}, "password": {pw}, "next": {"/"}}
		req, _ := http.NewRequest(http.MethodPost, f.srv.URL+"/login", strings.NewReader(form.Encode()))
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", f.srv.URL)
		for _, v := range xff {
			req.Header.Add("X-Forwarded-For", v)
		}
		res, err := b.c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	for i := range 5 {
		// The client claims the victim's address; the proxy appends the
		// address it saw on a line of its own.
		if code := login(mallory, "guess", "203.0.113.9", "198.51.100.7"); code != http.StatusUnauthorized {
			t.Fatalf("guess %d: %d", i, code)
		}
	}
	if code := login(mallory, "right-password", "198.51.100.7"); code != http.StatusTooManyRequests {
		t.Fatalf("the guessing address 198.51.100.7 is not locked out: %d, want 429", code)
	}
	victim := newBrowser(t, f.srv.URL)
	if code := login(victim, "right-password", "203.0.113.9"); code != http.StatusSeeOther {
		t.Fatalf("the victim's address 203.0.113.9 after guesses naming it: %d, want 303 (signed in)", code)
	}
}

// When the account's queue of slowed-down attempts is full the sign-in is
// refused with a message saying so (not a lock-out), and nothing is
// counted against the address.
func TestSignInRefusedWhenAccountQueueFull(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, func(a *handlers.Auth) {
		// Every slot would be a second away, the queue holds half of one.
		a.Limiter = people.NewLoginLimiter(nil, people.LoginPolicy{PerPair: 2, PerAddr: 20, Window: time.Minute,
			SlowAfter: 0, SlowStep: time.Second, SlowCap: time.Second, SlowQueue: 500 * time.Millisecond})
	})
	br := newBrowser(t, f.srv.URL)
	for range 3 {
		tok := br.csrf("/login")
		code, hdr, page := br.do(http.MethodPost, "/login", url.Values{"_csrf": {tok}, "username": {"ada"}, "password": {"right-password"}})
		if code != http.StatusTooManyRequests || hdr.Get("Retry-After") == "" || !strings.Contains(page, "you are not locked out") {
			t.Fatalf("sign-in while the account's queue is full: %d %q", code, hdr.Get("Retry-After"))
		}
	}
}
