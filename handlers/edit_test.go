package handlers_test

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview/action"
)

// confirmer previews through a page and confirms what it shows.
type confirmer struct {
	t   *testing.T
	b   *browser
	tok string
}

// preview posts form to path and returns the confirmation token, failing
// unless the preview is shown.
func (c confirmer) preview(what, path string, form url.Values) string {
	c.t.Helper()
	form.Set("_csrf", c.tok)
	code, _, body := c.b.do(http.MethodPost, path, form)
	m := regexpToken.FindStringSubmatch(body)
	if code != http.StatusOK || m == nil {
		c.t.Fatalf("%s preview: %d %s", what, code, parseDoc(c.t, body).Find(`main`).Text())
	}
	return m[1]
}

func (c confirmer) execute(what, token string) {
	c.t.Helper()
	code, _, body := c.b.follow(http.MethodPost, route.Execute, url.Values{"_csrf": {c.tok}, "token": {token}})
	if code != http.StatusOK {
		c.t.Fatalf("%s execute: %d %s", what, code, parseDoc(c.t, body).Find(`main`).Text())
	}
}

func (c confirmer) run(what, path string, form url.Values) {
	c.t.Helper()
	c.execute(what, c.preview(what, path, form))
}

// undoLast undoes the newest audit record through its page.
func (c confirmer) undoLast(f *console, conn string, db int) {
	c.t.Helper()
	recs, _, err := f.run.ReadAudit(context.Background(), action.Filter{})
	if err != nil || len(recs) == 0 {
		c.t.Fatalf("audit: %v", err)
	}
	code, _, body := c.b.do(http.MethodGet, route.Undo{Conn: conn, DB: db, Record: recs[0].ID}.URL(), nil)
	m := regexpToken.FindStringSubmatch(body)
	if code != http.StatusOK || m == nil {
		c.t.Fatalf("undo preview: %d %s", code, parseDoc(c.t, body).Find(`main`).Text())
	}
	c.execute("undo", m[1])
}

// An admin creates a key from the database page (name byte-exact, CRLF
// typed in the textarea kept as the LF typed) and edits it from its page,
// whose forms fit each argument; support sees no Create key; bad input is
// a 400.
func TestEditThroughThePages(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	f := newAuthFixture(t, rs, nil)
	ada, sam := newBrowserAs(t, f, "ada"), newBrowserAs(t, f, "sam")
	db := rs.Client(3)
	dbURL := route.DatabaseURL("main", 3)
	c := confirmer{t: t, b: ada, tok: ada.csrf(dbURL)}

	_, _, page := ada.do(http.MethodGet, dbURL, nil)
	if parseDoc(t, page).Find(`[data-testid="create-key-form"] select[name="arg.type"] option`).Length() != len(action.CreateTypes) {
		t.Fatal("the database page offers no Create key form with every type")
	}
	if _, _, page := sam.do(http.MethodGet, dbURL, nil); strings.Contains(page, `data-testid="create-key"`) {
		t.Fatal("support is offered Create key")
	}
	key := "edit:\xff \u200b"
	c.run("create", route.CreateKeyURL("main", 3), url.Values{"name": {`edit:\xff \u200b`}, "name_enc": {"escaped"},
		"arg.type": {"string"}, "arg.value": {"line 1\r\nline 2 "}, "lf": {"value"}, "arg.encoding": {"text"}, "arg.ttl": {"10m"}})
	if v := db.Get(t.Context(), key).Val(); v != "line 1\nline 2 " {
		t.Fatalf("created %q", v)
	}
	if ttl := db.PTTL(t.Context(), key).Val(); ttl < 9*time.Minute {
		t.Fatalf("created with TTL %v", ttl)
	}

	// The key page: the string's form holds its value, with a text/hex
	// choice; rename has a replace checkbox.
	_, _, page = ada.do(http.MethodGet, route.KeyURL("main", 3, key), nil)
	doc := parseDoc(t, page)
	if got := doc.Find(`[data-testid="action-set-string"] textarea[name="arg.value"]`).Text(); got != "line 1\nline 2 " {
		t.Fatalf("the edit form holds %q", got)
	}
	// Kinds acting on a server are not offered on a key's page (they
	// refuse a request naming a key).
	for _, kind := range []string{action.KindConfigSet, action.KindKillClient, action.KindCreateKey} {
		if doc.Find(`[data-testid="action-`+kind+`"]`).Length() != 0 {
			t.Errorf("the key page offers %s", kind)
		}
	}
	for _, sel := range []string{`[data-testid="action-set-string"] select[name="choice.encoding"]`, `[data-testid="action-rename-key"] input[type="checkbox"][name="choice.replace"]`, `[data-testid="action-persist"]`} {
		if doc.Find(sel).Length() != 1 {
			t.Fatalf("the key page has no %s", sel)
		}
	}
	at := route.Action{Conn: "main", DB: 3, Key: key}.PreviewURL()
	c.run("set-string", at, url.Values{"kind": {action.KindSetString}, "arg.value": {"00ff"}, "choice.encoding": {"hex"}})
	if v := db.Get(t.Context(), key).Val(); v != "\x00\xff" || db.PTTL(t.Context(), key).Val() < 9*time.Minute {
		t.Fatalf("edited to %q, TTL %v", v, db.PTTL(t.Context(), key).Val())
	}
	// A binary string's form is in hex.
	_, _, page = ada.do(http.MethodGet, route.KeyURL("main", 3, key), nil)
	doc = parseDoc(t, page)
	if v, _ := doc.Find(`[data-testid="action-set-string"] option[selected]`).Attr("value"); v != "hex" || doc.Find(`[data-testid="action-set-string"] textarea`).Text() != "00ff" {
		t.Fatalf("a binary value's form: %s", doc.Find(`[data-testid="action-set-string"]`).Text())
	}
	// Rename over a twin, the target in base64, the checkbox not decoded.
	db.Set(t.Context(), "edit:twin", "old", 0)
	c.run("rename", at, url.Values{"kind": {action.KindRenameKey}, "enc": {"base64"},
		"arg.target": {base64.StdEncoding.EncodeToString([]byte("edit:twin"))}, "choice.replace": {"true"}})
	if db.Get(t.Context(), "edit:twin").Val() != "\x00\xff" || db.Exists(t.Context(), key).Val() != 0 {
		t.Fatal("rename with replace did not move the value")
	}
	c.undoLast(f, "main", 3)
	if db.Get(t.Context(), "edit:twin").Val() != "old" || db.Get(t.Context(), key).Val() != "\x00\xff" {
		t.Fatal("undo of the rename did not put both keys back")
	}

	for _, bad := range []url.Values{
		{"name": {""}, "arg.type": {"string"}, "arg.value": {"v"}},
		{"name": {"n"}, "name_enc": {"base64"}, "arg.type": {"string"}, "arg.value": {"v"}},
		{"name": {"n"}, "arg.type": {"bitmap"}, "arg.value": {"v"}},
		{"name": {"n"}, "arg.type": {"hash"}, "arg.value": {"not json"}},
	} {
		bad.Set("_csrf", c.tok)
		if code, _, body := ada.do(http.MethodPost, route.CreateKeyURL("main", 3), bad); code != http.StatusBadRequest {
			t.Errorf("create %v: %d %s", bad, code, parseDoc(t, body).Find(`main`).Text())
		}
	}
	form := url.Values{"_csrf": {sam.csrf(dbURL)}, "name": {"n"}, "arg.type": {"string"}, "arg.value": {"v"}}
	if code, _, _ := sam.do(http.MethodPost, route.CreateKeyURL("main", 3), form); code != http.StatusForbidden {
		t.Errorf("support creates a key: %d", code)
	}
}

// On the embedded demo, a key created from the database page, a hash
// field set and a rename are each undone exactly.
func TestEditsOnTheDemo(t *testing.T) {
	t.Parallel()
	f, conns := demoConsole(t)
	ada := newBrowserAs(t, f, "ada")
	opt, err := redis.ParseURL(conns[0].URL)
	if err != nil {
		t.Fatal(err)
	}
	opt.DB = 14
	direct := redis.NewClient(opt)
	t.Cleanup(func() { direct.Close() })
	ctx := t.Context()
	c := confirmer{t: t, b: ada, tok: ada.csrf(route.DatabaseURL("eisland", 14))}

	const key = "demo:edit:hash "
	c.run("create", route.CreateKeyURL("eisland", 14), url.Values{"name": {key}, "arg.type": {"hash"}, "arg.value": {`{"a": "1", "b": "2"}`}, "arg.ttl": {"1h"}})
	if got := direct.HGetAll(ctx, key).Val(); len(got) != 2 || got["b"] != "2" || direct.PTTL(ctx, key).Val() <= 0 {
		t.Fatalf("created on the demo: %v", got)
	}
	c.undoLast(f, "eisland", 14)
	if direct.Exists(ctx, key).Val() != 0 {
		t.Fatal("undo of the create left the key on the demo")
	}
	c.run("create again", route.CreateKeyURL("eisland", 14), url.Values{"name": {key}, "arg.type": {"hash"}, "arg.value": {`{"a": "1", "b": "2"}`}, "arg.ttl": {"1h"}})
	at := route.Action{Conn: "eisland", DB: 14, Key: key}.PreviewURL()
	c.run("set-hash-field", at, url.Values{"kind": {action.KindSetHashField}, "arg.field": {"a"}, "arg.value": {"9"}})
	if direct.HGet(ctx, key, "a").Val() != "9" {
		t.Fatal("set-hash-field on the demo")
	}
	c.undoLast(f, "eisland", 14)
	if direct.HGet(ctx, key, "a").Val() != "1" {
		t.Fatal("undo of set-hash-field on the demo")
	}
	c.run("rename", at, url.Values{"kind": {action.KindRenameKey}, "arg.target": {"demo:edit:moved"}})
	if direct.Exists(ctx, key).Val() != 0 || direct.HGet(ctx, "demo:edit:moved", "b").Val() != "2" {
		t.Fatal("rename on the demo")
	}
	c.undoLast(f, "eisland", 14)
	if direct.HGet(ctx, key, "b").Val() != "2" || direct.Exists(ctx, "demo:edit:moved").Val() != 0 || direct.PTTL(ctx, key).Val() <= 0 {
		t.Fatal("undo of the rename on the demo")
	}
}
