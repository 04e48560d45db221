package handlers_test

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview/action"
)

// A value of the largest size an edit writes (1 MiB) is previewed and
// confirmed through the key page (as text that URL-encodes at 3 bytes a
// byte, and in hex), the Create key form and the API, and undone; the
// larger body is an admin's only: support and anonymous posts keep the
// small limit.
func TestEditLargeValues(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	f := newAuthFixture(t, rs, nil)
	ada, sam := newBrowserAs(t, f, "ada"), newBrowserAs(t, f, "sam")
	db := rs.Client(3)
	ctx := t.Context()
	dbURL := route.DatabaseURL("main", 3)
	c := confirmer{t: t, b: ada, tok: ada.csrf(dbURL)}

	text := strings.Repeat("é\n<&>\t", action.MaxEditBytes/8) // 8 bytes a round
	text += strings.Repeat("x", action.MaxEditBytes-len(text))
	key := "big:value"
	db.Set(ctx, key, "small", 0)
	at := route.Action{Conn: "main", DB: 3, Key: key}.PreviewURL()
	c.run("set-string text", at, url.Values{"kind": {action.KindSetString}, "arg.value": {text}, "choice.encoding": {"text"}})
	if v := db.Get(ctx, key).Val(); v != text {
		t.Fatalf("wrote %d bytes, want %d", len(v), len(text))
	}
	c.undoLast(f, "main", 3)
	if v := db.Get(ctx, key).Val(); v != "small" {
		t.Fatalf("undo left %d bytes", len(v))
	}
	bin := strings.Repeat("\x00\xff\x80", action.MaxEditBytes/3)
	c.run("set-string hex", at, url.Values{"kind": {action.KindSetString}, "arg.value": {hex.EncodeToString([]byte(bin))}, "choice.encoding": {"hex"}})
	if v := db.Get(ctx, key).Val(); v != bin {
		t.Fatalf("wrote %d bytes in hex, want %d", len(v), len(bin))
	}
	c.run("create", route.CreateKeyURL("main", 3), url.Values{"name": {"big:created"}, "arg.type": {"string"}, "arg.value": {text}})
	if v := db.Get(ctx, "big:created").Val(); v != text {
		t.Fatalf("created %d bytes", len(v))
	}

	api := &apiClient{t: t, b: ada, csrf: c.tok}
	code, js := api.do(http.MethodPost, route.APIPreview, map[string]any{"kind": action.KindCreateKey, "conn": "main", "db": 3, "key": "big:api",
		"args": map[string]string{action.ArgType: "string", action.ArgValue: text}})
	var pv struct {
		Token string `json:"token"`
	}
	if err := json.Unmarshal(js, &pv); code != http.StatusOK || err != nil {
		t.Fatalf("API preview: %d %.300s", code, js)
	}
	if code, js := api.do(http.MethodPost, route.APIExecute, map[string]any{"token": pv.Token}); code != http.StatusOK {
		t.Fatalf("API execute: %d %.300s", code, js)
	}
	if v := db.Get(ctx, "big:api").Val(); v != text {
		t.Fatalf("API created %d bytes", len(v))
	}

	// Support (no edit of values) and a stranger keep the 64 KiB limit.
	big := url.Values{"kind": {action.KindSetString}, "arg.value": {text}, "_csrf": {sam.csrf(dbURL)}}
	if code, _, _ := sam.do(http.MethodPost, at, big); code != http.StatusRequestEntityTooLarge {
		t.Errorf("support's 1 MiB preview: %d", code)
	}
	if code, _, _ := newBrowser(t, f.srv.URL).follow(http.MethodPost, route.Execute, url.Values{"token": {text}}); code != http.StatusRequestEntityTooLarge {
		t.Errorf("an anonymous 1 MiB post: %d", code)
	}
}

// A string holding a byte a textarea cannot give back (NUL, which HTML
// turns into U+FFFD; a lone CR; another control byte) is filled in as hex,
// read as a browser parses the page; text stays text. A value longer than
// the page reads is not filled in, and the form says why.
func TestEditPrefillControlBytes(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	f := newAuthFixture(t, rs, nil)
	ada := newBrowserAs(t, f, "ada")
	db := rs.Client(3)
	for v, enc := range map[string]string{"a\x00b": "hex", "a\rb": "hex", "a\x1bb": "hex", "a\x7fb": "hex", "tab\tline\nend é": "text"} {
		db.Set(t.Context(), "pre", v, 0)
		_, _, page := ada.do(http.MethodGet, route.KeyURL("main", 3, "pre"), nil)
		form := parseDoc(t, page).Find(`[data-testid="action-set-string"]`)
		got, _ := form.Find(`select[name="choice.encoding"] option[selected]`).Attr("value")
		want := v
		if enc == "hex" {
			want = hex.EncodeToString([]byte(v))
		}
		if got != enc || form.Find(`textarea[name="arg.value"]`).Text() != want {
			t.Errorf("%q is filled in as %s %q", v, got, form.Find(`textarea[name="arg.value"]`).Text())
		}
	}
	// "Written as" base64 applies to the value, not to the index (a
	// number, sent as it is typed).
	db.RPush(t.Context(), "lst", "a", "b")
	_, _, page := ada.do(http.MethodGet, route.KeyURL("main", 3, "lst"), nil)
	if parseDoc(t, page).Find(`[data-testid="action-set-list-element"] input[type="number"][name="choice.index"]`).Length() != 1 {
		t.Fatal("the index is not a number sent as typed")
	}
	c := confirmer{t: t, b: ada, tok: ada.csrf(route.DatabaseURL("main", 3))}
	c.run("set-list-element", route.Action{Conn: "main", DB: 3, Key: "lst"}.PreviewURL(), url.Values{"kind": {action.KindSetListElement}, "enc": {"base64"},
		"choice.index": {"1"}, "arg.value": {base64.StdEncoding.EncodeToString([]byte("\xffz"))}})
	if got := db.LRange(t.Context(), "lst", 0, -1).Val(); len(got) != 2 || got[1] != "\xffz" {
		t.Fatalf("list %q", got)
	}
	// Persist is offered on a key with a TTL only (elsewhere it is refused).
	for ttl, want := range map[time.Duration]int{0: 0, time.Hour: 1} {
		db.Set(t.Context(), "pre", "v", ttl)
		_, _, page := ada.do(http.MethodGet, route.KeyURL("main", 3, "pre"), nil)
		if n := parseDoc(t, page).Find(`[data-testid="action-persist"]`).Length(); n != want {
			t.Errorf("TTL %v: %d persist forms, want %d", ttl, n, want)
		}
	}
	db.Set(t.Context(), "pre", strings.Repeat("v", 70<<10), 0)
	_, _, page = ada.do(http.MethodGet, route.KeyURL("main", 3, "pre"), nil)
	form := parseDoc(t, page).Find(`[data-testid="action-set-string"]`)
	if form.Find(`textarea`).Text() != "" || !strings.Contains(form.Text(), "not filled in") {
		t.Errorf("a value longer than the page reads: %q", form.Text())
	}
}
