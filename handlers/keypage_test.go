package handlers_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/keydeck/keydeck/internal/route"
)

// The key page offers part-level actions only on keys of their type, and
// removing a set member through the pages removes that member alone.
func TestKeyPageOffersPartActionsByType(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	ctx := context.Background()
	db := f.redis.Client(0)
	db.SAdd(ctx, "plain:set", "a", "b")
	db.HSet(ctx, "plain:hash", "f", "v")
	db.Set(ctx, "plain:string", "x", 0)
	br := newBrowser(t, f.srv.URL)
	br.login("ada", "right-password")
	for key, want := range map[string][2]bool{"plain:set": {true, false}, "plain:hash": {false, true}, "plain:string": {false, false}} {
		_, _, page := br.do(http.MethodGet, route.KeyURL("main", 0, key), nil)
		if got := [2]bool{strings.Contains(page, `data-testid="action-remove-set-member"`), strings.Contains(page, `data-testid="action-remove-hash-field"`)}; got != want {
			t.Fatalf("%s offers set/hash part actions %v, want %v", key, got, want)
		}
	}
	_, _, page := br.do(http.MethodGet, route.KeyURL("main", 0, "plain:set"), nil)
	tok := csrfRe.FindStringSubmatch(page)[1]
	code, _, body := br.do(http.MethodPost, route.Action{Conn: "main", DB: 0, Key: "plain:set"}.PreviewURL(), url.Values{"_csrf": {tok}, "kind": {"remove-set-member"}, "arg.member": {"a"}})
	conf := regexpToken.FindStringSubmatch(body)
	if code != http.StatusOK || conf == nil {
		t.Fatalf("preview: %d %.300s", code, body)
	}
	if code, _, body = br.follow(http.MethodPost, "/actions/execute", url.Values{"_csrf": {tok}, "token": {conf[1]}}); code != http.StatusOK {
		t.Fatalf("execute: %d %.300s", code, body)
	}
	if got := db.SMembers(ctx, "plain:set").Val(); len(got) != 1 || got[0] != "b" {
		t.Fatalf("set is now %q", got)
	}
}

// Keydeck's own keys are offered no action (every one would be refused).
func TestKeyPageOffersNothingOnKeydecksOwnKeys(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	f.redis.Client(0).Set(context.Background(), "keydeck:session-secret", "s", 0)
	br := newBrowser(t, f.srv.URL)
	br.login("ada", "right-password")
	_, _, page := br.do(http.MethodGet, route.KeyURL("main", 0, "keydeck:session-secret"), nil)
	if strings.Contains(page, `data-testid="action-`) || !strings.Contains(page, "belongs to Keydeck itself") {
		t.Fatal("the key page offers actions on Keydeck's own key")
	}
}

// A member no text field can carry — a newline, a byte that is not UTF-8 —
// is removed through the key page by pasting it as the value table shows
// it, with the form's argument encoding set to "escaped" (or as base64);
// the page offers that choice, and a malformed escape is refused with a
// clear error, not read as other bytes.
func TestKeyPageRemovesAMemberNoTextFieldCanCarry(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	ctx := context.Background()
	db := f.redis.Client(0)
	odd := []string{"line\nbreak", "bad\xff byte", `back\slash`, " padded "}
	db.SAdd(ctx, "plain:set", "keep", odd[0], odd[1], odd[2], odd[3])
	br := newBrowser(t, f.srv.URL)
	br.login("ada", "right-password")
	_, _, page := br.do(http.MethodGet, route.KeyURL("main", 0, "plain:set"), nil)
	if !strings.Contains(page, `name="enc"`) || !strings.Contains(page, `value="escaped"`) {
		t.Fatal("the remove form offers no argument encoding")
	}
	tok := csrfRe.FindStringSubmatch(page)[1]
	remove := func(enc, member string) (int, string) {
		code, _, body := br.do(http.MethodPost, route.Action{Conn: "main", DB: 0, Key: "plain:set"}.PreviewURL(),
			url.Values{"_csrf": {tok}, "kind": {"remove-set-member"}, "enc": {enc}, "arg.member": {member}})
		conf := regexpToken.FindStringSubmatch(body)
		if code != http.StatusOK || conf == nil {
			return code, body
		}
		code, _, body = br.follow(http.MethodPost, "/actions/execute", url.Values{"_csrf": {tok}, "token": {conf[1]}})
		return code, body
	}
	for _, c := range []struct{ enc, typed string }{
		{"escaped", `line\nbreak`},
		{"escaped", `bad\xff byte`},
		{"escaped", `back\\slash`},
		{"base64", "IHBhZGRlZCA"}, // " padded ", URL-safe and unpadded
	} {
		if code, body := remove(c.enc, c.typed); code != http.StatusOK {
			t.Fatalf("%s %q: %d %.300s", c.enc, c.typed, code, body)
		}
	}
	if got := db.SMembers(ctx, "plain:set").Val(); len(got) != 1 || got[0] != "keep" {
		t.Fatalf("set is now %q", got)
	}
	for _, c := range []struct{ enc, typed, why string }{
		{"escaped", `dangling\`, "lone backslash"},
		{"escaped", `\q`, "not an escape"},
		{"escaped", `\xZZ`, "hexadecimal"},
		{"base64", "!!", "base64"},
		{"rot13", "keep", "encoding"},
	} {
		if code, body := remove(c.enc, c.typed); code != http.StatusBadRequest || !strings.Contains(body, c.why) {
			t.Errorf("%s %q: %d, want 400 saying %q: %.400s", c.enc, c.typed, code, c.why, body)
		}
	}
}
