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
	if code, _, body = br.do(http.MethodPost, "/actions/execute", url.Values{"_csrf": {tok}, "token": {conf[1]}}); code != http.StatusOK {
		t.Fatalf("execute: %d %.300s", code, body)
	}
	if got := db.SMembers(ctx, "plain:set").Val(); len(got) != 1 || got[0] != "b" {
		t.Fatalf("set is now %q", got)
	}
}

// Keydeck's own keys are offered no action (every one would be refused).
func TestKeyPageOffersNothingOnKeydecksOwnKeys(t *testing.T) {
	f := newAuthFixture(t, nil, nil)
	f.redis.Client(0).Set(context.Background(), "keydeck:session-secret", "s", 0)
	br := newBrowser(t, f.srv.URL)
	br.login("ada", "right-password")
	_, _, page := br.do(http.MethodGet, route.KeyURL("main", 0, "keydeck:session-secret"), nil)
	if strings.Contains(page, `data-testid="action-`) || !strings.Contains(page, "belongs to Keydeck itself") {
		t.Fatal("the key page offers actions on Keydeck's own key")
	}
}
