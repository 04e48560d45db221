package handlers_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview"
)

var userLinkRe = regexp.MustCompile(`href="([^"]*)"[^>]*data-testid="(user-unban|user-ban-action|user-action-[a-z-]+)"`)

// userLinks are the hrefs of the user page's links of testid, unescaped.
func userLinks(body, testid string) []string {
	var out []string
	for _, m := range userLinkRe.FindAllStringSubmatch(body, -1) {
		if m[2] == testid {
			out = append(out, html.UnescapeString(m[1]))
		}
	}
	return out
}

// previewArgs parses an action preview link.
func previewArgs(t *testing.T, href string) url.Values {
	t.Helper()
	u, err := url.Parse(href)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query()
}

// The user page of a banned name links support and admin straight to the
// unban preview — the very link the Bans page gives, the name byte-exact
// (HTML, unicode, invalid UTF-8, 1 KB) — and a name not banned to the ban
// preview; a viewer sees the verdict and neither link; the link opens the
// preview of the unban.
func TestUserPageBanLinks(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	banned := []string{`eve"><script>alert(1)</script>'`, "🦊 fox:ops admin", "韩梅梅", strings.Repeat("界", 341), "bad\xff\xfename"}
	seedBans(t, f, banned...)
	vera, sam, ada := newBrowser(t, f.srv.URL), newBrowser(t, f.srv.URL), newBrowser(t, f.srv.URL)
	for b, who := range map[*browser]string{vera: "vera", sam: "sam", ada: "ada"} {
		if code := b.login(who, "right-password"); code != http.StatusSeeOther {
			t.Fatalf("sign in %s: %d", who, code)
		}
	}
	for _, name := range banned {
		for who, b := range map[string]*browser{"sam": sam, "ada": ada} {
			code, _, page := b.do(http.MethodGet, route.UserURL("main", name), nil)
			if code != http.StatusOK || !strings.Contains(page, `data-testid="user-ban-verdict">banned<`) {
				t.Fatalf("%s, user page of %q: %d %.400s", who, name, code, page)
			}
			unban := userLinks(page, "user-unban")
			if len(unban) != 1 || len(userLinks(page, "user-ban-action")) != 0 {
				t.Fatalf("%s, %q: unban links %v, ban links %v", who, name, unban, userLinks(page, "user-ban-action"))
			}
			q := previewArgs(t, unban[0])
			if q.Get("kind") != "unban" || q.Get("key") != "user:ban:set" || q.Get("db") != "9" || q.Get("arg.name") != name {
				t.Fatalf("%s, %q: unban link %s", who, name, unban[0])
			}
			// The same link as the Bans page's check.
			_, _, bp := b.do(http.MethodGet, "/c/main/bans?check="+url.QueryEscape(name), nil)
			if fromBans := links(bp, "unban-action"); len(fromBans) != 1 || fromBans[0] != unban[0] {
				t.Fatalf("%q: user page links %s, Bans page %v", name, unban[0], fromBans)
			}
		}
		code, _, page := vera.do(http.MethodGet, route.UserURL("main", name), nil)
		if code != http.StatusOK || !strings.Contains(page, `data-testid="user-ban-verdict">banned<`) {
			t.Fatalf("vera, user page of %q: %d", name, code)
		}
		if strings.Contains(page, `data-testid="user-unban"`) || strings.Contains(page, `data-testid="user-ban-action"`) {
			t.Fatalf("a viewer sees a ban action on %q", name)
		}
		if strings.Contains(page, "<script>alert") {
			t.Fatal("the name's markup is live")
		}
	}

	// Not banned: Ban… only, byte-exact.
	const free = "not-banned <i>x</i>\xfe"
	for who, b := range map[string]*browser{"sam": sam, "ada": ada} {
		_, _, page := b.do(http.MethodGet, route.UserURL("main", free), nil)
		ban := userLinks(page, "user-ban-action")
		if len(ban) != 1 || len(userLinks(page, "user-unban")) != 0 {
			t.Fatalf("%s: ban links %v, unban %v", who, ban, userLinks(page, "user-unban"))
		}
		if q := previewArgs(t, ban[0]); q.Get("kind") != "ban" || q.Get("key") != "user:ban:set" || q.Get("arg.name") != free {
			t.Fatalf("%s: ban link %s", who, ban[0])
		}
	}
	if _, _, page := vera.do(http.MethodGet, route.UserURL("main", free), nil); strings.Contains(page, `data-testid="user-ban-action"`) {
		t.Fatal("a viewer sees Ban…")
	}

	// The link opens the unban's preview of that name.
	_, _, page := sam.do(http.MethodGet, route.UserURL("main", banned[1]), nil)
	code, _, pv := sam.do(http.MethodGet, userLinks(page, "user-unban")[0], nil, "Sec-Fetch-Site", "same-origin")
	if code != http.StatusOK || !strings.Contains(pv, "UNBAN") || !strings.Contains(pv, html.EscapeString(banned[1])) {
		t.Fatalf("preview %d %.600s", code, pv)
	}
}

// A bloom known not to match its set (the Bans page's check found it)
// disables the user page's ban links too, and says so.
func TestUserPageBanLinksOffOnMismatch(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	ctx := context.Background()
	db := f.redis.Client(9)
	db.SetBit(ctx, "user:ban:bloom", 1000003-1, 0)
	for _, n := range []string{"a", "b", "c", "d"} {
		db.SAdd(ctx, "user:ban:set", n)
		for _, off := range redisview.BloomPositions(n, 1<<20, 6) { // another bit count
			db.SetBit(ctx, "user:ban:bloom", off, 1)
		}
	}
	sam := newBrowser(t, f.srv.URL)
	sam.login("sam", "right-password")
	if _, _, bp := sam.do(http.MethodGet, "/c/main/bans", nil); !strings.Contains(bp, `data-testid="consistency-mismatch"`) {
		t.Fatal("the Bans page found no mismatch")
	}
	_, _, page := sam.do(http.MethodGet, route.UserURL("main", "a"), nil)
	if strings.Contains(page, `data-testid="user-unban"`) || strings.Contains(page, `data-testid="user-ban-action"`) || !strings.Contains(page, `data-testid="user-ban-note"`) {
		t.Fatalf("user page on a mismatched bloom: %.1500s", page[strings.Index(page, `data-testid="user-ban"`):])
	}
}

// A locked login offers Unlock login… on its lock and on its failure
// window; a window not locked offers Reset limit; a failure counter Clear
// failures. A viewer sees none. The unlock link's preview names both keys.
func TestUserPageUnlockLogin(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	seedUser(t, f, "李雷 <b>", 8*time.Minute)
	seedUser(t, f, "ann", time.Minute)
	f.redis.Client(6).Del(context.Background(), "auth:limit:login:lock:ann")
	vera, sam, ada := newBrowser(t, f.srv.URL), newBrowser(t, f.srv.URL), newBrowser(t, f.srv.URL)
	for b, who := range map[*browser]string{vera: "vera", sam: "sam", ada: "ada"} {
		b.login(who, "right-password")
	}
	keyOf := func(href string) string { return previewArgs(t, href).Get("key") }
	for who, b := range map[string]*browser{"sam": sam, "ada": ada} {
		_, _, page := b.do(http.MethodGet, route.UserURL("main", "李雷 <b>"), nil)
		unlock := userLinks(page, "user-action-unlock-login")
		if len(unlock) != 2 || keyOf(unlock[0]) != "auth:limit:login:failures:李雷 <b>" || keyOf(unlock[1]) != "auth:limit:login:lock:李雷 <b>" {
			t.Fatalf("%s: unlock links %v", who, unlock)
		}
		for _, href := range userLinks(page, "user-action-reset-limit") {
			if strings.Contains(keyOf(href), "auth:limit:login") {
				t.Fatalf("%s: a locked login offers Reset limit: %s", who, href)
			}
		}
		if c := userLinks(page, "user-action-clear-failures"); len(c) != 1 || !strings.HasPrefix(keyOf(c[0]), "verify:slider:fail:account:") {
			t.Fatalf("%s: clear-failures links %v", who, c)
		}
		_, _, page = b.do(http.MethodGet, route.UserURL("main", "ann"), nil)
		if len(userLinks(page, "user-action-unlock-login")) != 0 {
			t.Fatalf("%s: Unlock login… offered on a login not locked", who)
		}
		if !strings.Contains(strings.Join(userLinks(page, "user-action-reset-limit"), " "), url.QueryEscape("auth:limit:login:failures:ann")) {
			t.Fatalf("%s: the unlocked window offers no reset: %v", who, userLinks(page, "user-action-reset-limit"))
		}
	}
	_, _, page := vera.do(http.MethodGet, route.UserURL("main", "李雷 <b>"), nil)
	if m := userLinkRe.FindString(page); m != "" || !strings.Contains(page, `data-testid="user-key"`) {
		t.Fatalf("a viewer sees an action: %s", m)
	}
	_, _, page = sam.do(http.MethodGet, route.UserURL("main", "李雷 <b>"), nil)
	code, _, pv := sam.do(http.MethodGet, userLinks(page, "user-action-unlock-login")[1], nil, "Sec-Fetch-Site", "same-origin")
	for _, k := range []string{"auth:limit:login:lock:李雷 &lt;b&gt;", "auth:limit:login:failures:李雷 &lt;b&gt;"} {
		if code != http.StatusOK || !strings.Contains(pv, k) {
			t.Fatalf("preview %d lacks %s: %.800s", code, k, pv)
		}
	}
}
