package handlers_test

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/internal/route"
)

var formActionRe = regexp.MustCompile(`<form method="post" action="([^"]+)"[^>]*data-testid="action-delete-key"`)

// A key whose name is not valid UTF-8 is deleted through the pages — key
// page form, preview, confirmation — and only that key: its look-alike
// holding the same value survives.
func TestKeyPageActsOnTheExactKey(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	ctx := context.Background()
	const bad, lookalike = "conf:\xff", "conf:\xEF\xBF\xBD"
	db := f.redis.Client(0)
	db.Set(ctx, bad, "same-value", 0)
	db.Set(ctx, lookalike, "same-value", 0)
	br := newBrowser(t, f.srv.URL)
	br.login("ada", "right-password")
	code, _, page := br.do(http.MethodGet, route.KeyURL("main", 0, bad), nil)
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
	if code, _, body = br.follow(http.MethodPost, "/actions/execute", url.Values{"_csrf": {tok}, "token": {conf[1]}}); code != http.StatusOK {
		t.Fatalf("execute: %d %.300s", code, body)
	}
	if db.Exists(ctx, bad).Val() != 0 || db.Exists(ctx, lookalike).Val() != 1 {
		t.Fatal("the wrong key was deleted")
	}
}

// A cross-site page cannot make a signed-in admin's browser open a preview,
// which reads (DUMPs) the key it names.
func TestCrossSitePreviewRefused(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
	rs := redistest.Start(t)
	if err := rs.Client(0).Do(context.Background(), "acl", "setuser", "narrow", "on", ">pw", "~acl:*", "+@all").Err(); err != nil {
		t.Fatal(err)
	}
	f := newAuthFixtureURL(t, rs, fmt.Sprintf("redis://narrow:pw@%s/0", rs.Addr), nil)
	br := newBrowser(t, f.srv.URL)
	br.login("ada", "right-password")
	code, _, body := br.do(http.MethodGet, route.KeyURL("main", 0, "definitely-not-there"), nil)
	if code != http.StatusBadGateway || strings.Contains(body, "does not exist") || !strings.Contains(body, "not permitted") {
		t.Fatalf("%d %.400s", code, body)
	}
}
