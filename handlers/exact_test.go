package handlers

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/PuerkitoBio/goquery"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/views"
)

var formActionRe = regexp.MustCompile(`<form method="post" action="([^"]+)"[^>]*data-testid="action-delete-key"`)

// A key whose name is not valid UTF-8 is deleted through the pages — key
// page form, preview, confirmation — and only that key: its look-alike
// holding the same value survives.
func TestKeyPageActsOnTheExactKey(t *testing.T) {
	f := newAuthFixture(t, nil, nil)
	ctx := context.Background()
	const bad, lookalike = "conf:\xff", "conf:\xEF\xBF\xBD"
	db := f.redis.Client(0)
	db.Set(ctx, bad, "same-value", 0)
	db.Set(ctx, lookalike, "same-value", 0)
	br := newBrowser(t, f.srv.URL)
	br.login("ada", "right-password")
	code, _, page := br.do(http.MethodGet, keyURL("main", 0, bad), nil)
	m := formActionRe.FindStringSubmatch(page)
	if code != http.StatusOK || m == nil {
		t.Fatalf("key page: %d, no delete form", code)
	}
	if !utf8.ValidString(page) || !strings.Contains(page, `conf:\xff`) {
		t.Fatal("the key page does not show the name escaped")
	}
	tok := csrfRe.FindStringSubmatch(page)[1]
	code, _, body := br.do(http.MethodPost, html.UnescapeString(m[1]), url.Values{"_csrf": {tok}, "kind": {"delete-key"}})
	conf := regexpToken.FindStringSubmatch(body)
	if code != http.StatusOK || conf == nil {
		t.Fatalf("preview: %d %.300s", code, body)
	}
	if code, _, body = br.do(http.MethodPost, "/actions/execute", url.Values{"_csrf": {tok}, "token": {conf[1]}}); code != http.StatusOK {
		t.Fatalf("execute: %d %.300s", code, body)
	}
	if db.Exists(ctx, bad).Val() != 0 || db.Exists(ctx, lookalike).Val() != 1 {
		t.Fatal("the wrong key was deleted")
	}
}

// A cross-site page cannot make a signed-in admin's browser open a preview,
// which reads (DUMPs) the key it names.
func TestCrossSitePreviewRefused(t *testing.T) {
	f := newAuthFixture(t, nil, nil)
	ctx := context.Background()
	f.redis.Client(0).Set(ctx, "k", "v", 0)
	br := newBrowser(t, f.srv.URL)
	br.login("ada", "right-password")
	q := "/actions/preview?" + url.Values{"kind": {"delete-key"}, "conn": {"main"}, "db": {"0"}, "key": {"k"}}.Encode()
	before, _ := f.redis.CommandCalls(ctx)
	for _, hdr := range [][]string{
		{"Sec-Fetch-Site", "cross-site"},
		{"Sec-Fetch-Site", "same-site"},
		{"Sec-Fetch-Site", "", "Referer", "https://evil.example/x"},
		{"Sec-Fetch-Site", ""},
	} {
		if code, _, _ := br.do(http.MethodGet, q, nil, hdr...); code != http.StatusForbidden {
			t.Fatalf("%v: %d", hdr, code)
		}
		if code, _, _ := br.do(http.MethodGet, "/actions/undo?conn=main&db=0&record=1-1", nil, hdr...); code != http.StatusForbidden {
			t.Fatalf("undo %v: %d", hdr, code)
		}
	}
	after, _ := f.redis.CommandCalls(ctx)
	if after["dump"] != before["dump"] {
		t.Fatal("a refused preview read the key")
	}
	for _, hdr := range [][]string{{"Sec-Fetch-Site", "same-origin"}, {"Sec-Fetch-Site", "none"}, {"Sec-Fetch-Site", "", "Referer", f.srv.URL + "/c/main/db/0"}} {
		if code, _, body := br.do(http.MethodGet, q, nil, hdr...); code != http.StatusOK {
			t.Fatalf("%v: %d %.200s", hdr, code, body)
		}
	}
}

// A key the connection's ACL user may not read is not "missing".
func TestKeyPageSaysWhyAKeyCannotBeRead(t *testing.T) {
	rs := redistest.Start(t)
	if err := rs.Client(0).Do(context.Background(), "acl", "setuser", "narrow", "on", ">pw", "~acl:*", "+@all").Err(); err != nil {
		t.Fatal(err)
	}
	f := newAuthFixtureURL(t, rs, fmt.Sprintf("redis://narrow:pw@%s/0", rs.Addr), nil)
	br := newBrowser(t, f.srv.URL)
	br.login("ada", "right-password")
	code, _, body := br.do(http.MethodGet, keyURL("main", 0, "definitely-not-there"), nil)
	if code != http.StatusBadGateway || strings.Contains(body, "does not exist") || !strings.Contains(body, "not permitted") {
		t.Fatalf("%d %.400s", code, body)
	}
}

// Names are bytes: a key name or member comes back exactly from the key
// page's links and forms and from a signed confirmation token.
func FuzzNamesRoundTripPages(f *testing.F) {
	for _, s := range []string{"k", "conf:\xff", "conf:\xEF\xBF\xBD", "\x00 %&=+#?", `"><script>x</script>`, "ünï:cødé", "a b/c"} {
		f.Add(s)
	}
	s := signer{key: []byte(testSecret)}
	f.Fuzz(func(t *testing.T, name string) {
		if name == "" {
			return
		}
		if u, err := url.Parse(keyURL("main", 3, name)); err != nil || u.Query().Get("k") != name {
			t.Fatalf("key link lost %q", name)
		}
		var b strings.Builder
		vm := views.KeyVM{Conn: "main", DB: 3, Key: name, Exists: true, PreviewURL: previewURL("main", 3, name),
			Actions: []views.ActionForm{{Kind: "delete-key", Title: "Delete key"}}}
		if err := views.KeyPage(views.Page{CSRF: "t"}, vm).Render(context.Background(), &b); err != nil {
			t.Fatal(err)
		}
		doc, err := goquery.NewDocumentFromReader(strings.NewReader(b.String()))
		if err != nil {
			t.Fatal(err)
		}
		formAction, _ := doc.Find(`[data-testid="action-delete-key"]`).Attr("action")
		u, err := url.Parse(formAction)
		if err != nil || u.Query().Get("key") != name || u.Query().Get("db") != "3" {
			t.Fatalf("form lost %q: %q", name, formAction)
		}
		pv := action.Preview{Kind: "remove-leaderboard-entry", Request: action.Request{Conn: "main", DB: 3, Key: name, Args: map[string]string{"member": name}},
			Fingerprints: []string{"absent"}, Made: time.Now(), Nonce: "n"}
		raw, err := s.open("action", s.sign("action", []byte(pv.Token())))
		if err != nil {
			t.Fatal(err)
		}
		back, err := action.ParseToken(string(raw))
		if err != nil || back.Request.Key != name || back.Request.Args["member"] != name {
			t.Fatalf("token lost %q: %+v %v", name, back.Request, err)
		}
	})
}
