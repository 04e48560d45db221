package handlers_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/keydeck/keydeck/handlers"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/internal/server"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/action"
	cmdconsole "github.com/keydeck/keydeck/redisview/console"
)

// consoleRun posts a command line to the console as b, database db.
func consoleRun(b *browser, db, line string) (int, string) {
	b.t.Helper()
	tok := b.csrf(route.ConsoleURL("main"))
	code, _, body := b.do(http.MethodPost, route.ConsoleURL("main"), url.Values{"_csrf": {tok}, "command": {line}, "db": {db}})
	return code, body
}

var auditIDRe = regexp.MustCompile(`href="/audit/([0-9]+-[0-9]+)"`)

// The role matrix of the console on a real redis-server: viewers read,
// never write nor read a sensitive key (also as one key of several);
// admins' writes are previewed, confirmed, audited and undone; FLUSHALL
// is refused to everyone without --console-allow-dangerous.
func TestConsoleRoles(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	ctx := context.Background()
	db5 := f.redis.Client(5)
	db5.Set(ctx, "plain", "visible-value", 0)
	db5.Set(ctx, "totp:security:secret:plain:ada", "SECRET-MARKER", 0)
	vera, ada := newBrowserAs(t, f, "vera"), newBrowserAs(t, f, "ada")

	if code, _, body := vera.do(http.MethodGet, route.ConsoleURL("main"), nil); code != http.StatusOK || !strings.Contains(body, `data-testid="console-form"`) {
		t.Fatalf("viewer GET: %d", code)
	}
	if code, body := consoleRun(vera, "5", "GET plain"); code != http.StatusOK || !strings.Contains(body, `&#34;visible-value&#34;`) {
		t.Fatalf("viewer GET plain: %d %s", code, consoleAnswer(body))
	}
	for _, line := range []string{"DEL plain", "SET plain x", "FLUSHALL", "GET totp:security:secret:plain:ada",
		"MGET plain totp:security:secret:plain:ada other", "KEYS *"} {
		code, body := consoleRun(vera, "5", line)
		if code != http.StatusForbidden || !strings.Contains(body, `data-testid="console-refusal"`) || strings.Contains(body, "SECRET-MARKER") {
			t.Errorf("viewer %s: %d %s", line, code, consoleAnswer(body))
		}
	}
	if _, body := consoleRun(vera, "5", "KEYS *"); !strings.Contains(body, `href="/c/main/db/5/keys"`) {
		t.Errorf("KEYS refused without the key browser's link: %s", consoleAnswer(body))
	}
	// The same for an admin: a sensitive key is never read, FLUSHALL is
	// refused without the flag.
	for _, line := range []string{"GET totp:security:secret:plain:ada", "FLUSHALL"} {
		if code, body := consoleRun(ada, "5", line); code != http.StatusForbidden || strings.Contains(body, "SECRET-MARKER") {
			t.Errorf("admin %s: %d %s", line, code, consoleAnswer(body))
		}
	}
	// A POST without the form's CSRF token is refused, read or not.
	if code, _, _ := vera.do(http.MethodPost, route.ConsoleURL("main"), url.Values{"command": {"GET plain"}, "db": {"5"}}); code != http.StatusForbidden {
		t.Errorf("no CSRF token: %d", code)
	}

	// An admin's write: previewed with the key's state, confirmed,
	// audited, undone; the key's name is bytes (HTML, invalid UTF-8, a
	// space, a quote) carried exactly through the form.
	key := "<b>\xff \"k"
	db5.Set(ctx, key, "old", 0)
	code, body := consoleRun(ada, "5", `SET "<b>\xff \"k" "new value"`)
	m := regexpToken.FindStringSubmatch(body)
	if code != http.StatusOK || m == nil || !strings.Contains(body, `data-testid="confirm"`) || !strings.Contains(html.UnescapeString(body), `"<b>\xff \"k" before: string`) {
		t.Fatalf("admin SET preview: %d %s", code, body)
	}
	if v := db5.Get(ctx, key).Val(); v != "old" {
		t.Fatalf("written before the confirmation: %q", v)
	}
	code, _, body = ada.follow(http.MethodPost, route.Execute, url.Values{"_csrf": {ada.csrf(route.ConsoleURL("main"))}, "token": {html.UnescapeString(m[1])}})
	id := auditIDRe.FindStringSubmatch(body)
	if code != http.StatusOK || id == nil || db5.Get(ctx, key).Val() != "new value" {
		t.Fatalf("execute: %d %q %s", code, db5.Get(ctx, key).Val(), body)
	}
	recs, _, err := f.run.ReadAudit(ctx, action.Filter{})
	if err != nil || len(recs) == 0 || recs[0].Action != cmdconsole.KindCommand || recs[0].User != "ada" {
		t.Fatalf("audit: %+v %v", recs, err)
	}
	code, _, body = ada.do(http.MethodGet, route.Undo{Conn: "main", DB: 5, Record: html.UnescapeString(id[1])}.URL(), nil)
	if m = regexpToken.FindStringSubmatch(body); code != http.StatusOK || m == nil {
		t.Fatalf("undo preview: %d %s", code, body)
	}
	code, _, _ = ada.follow(http.MethodPost, route.Execute, url.Values{"_csrf": {ada.csrf(route.ConsoleURL("main"))}, "token": {html.UnescapeString(m[1])}})
	if code != http.StatusOK || db5.Get(ctx, key).Val() != "old" {
		t.Fatalf("undo: %d %q", code, db5.Get(ctx, key).Val())
	}

	// A key that does not exist yet is previewed as absent (undo deletes it).
	if code, body := consoleRun(ada, "5", "SET brand-new 1"); code != http.StatusOK || !strings.Contains(body, "before: absent") {
		t.Errorf("SET of a new key: %d %s", code, body)
	}

	// History: what ran or was previewed, arguments withheld for a
	// sensitive key; a refused line is not kept.
	if code, body = consoleRun(ada, "5", "SET totp:security:secret:plain:ada NEW-SECRET"); code != http.StatusOK || strings.Contains(body, "NEW-SECRET") {
		t.Fatalf("admin SET of a sensitive key: %d, the value shown: %v", code, strings.Contains(body, "NEW-SECRET"))
	}
	_, _, body = ada.do(http.MethodGet, route.ConsoleURL("main"), nil)
	hist := html.UnescapeString(body[strings.Index(body, `data-testid="console-history"`):])
	if !strings.Contains(hist, `SET "<b>\xff \"k" "new value"`) || strings.Contains(hist, "NEW-SECRET") || strings.Contains(hist, "FLUSHALL") ||
		!strings.Contains(hist, "arguments withheld") {
		t.Errorf("admin's history: %s", hist)
	}
	_, _, body = vera.do(http.MethodGet, route.ConsoleURL("main"), nil)
	if hist := body[strings.Index(body, `data-testid="console-history"`):]; !strings.Contains(hist, "GET plain") || strings.Contains(hist, "new value") {
		t.Errorf("viewer's history: %s", hist)
	}
}

// --read-only refuses every console write, to admins too; reads run.
func TestConsoleReadOnly(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, func(a *handlers.Auth) { a.ReadOnly = true })
	ada := newBrowserAs(t, f, "ada")
	if code, body := consoleRun(ada, "0", "SET k v"); code != http.StatusForbidden || !strings.Contains(body, "read-only") {
		t.Errorf("read-only SET: %d %s", code, consoleAnswer(body))
	}
	if code, body := consoleRun(ada, "0", "DBSIZE"); code != http.StatusOK || !strings.Contains(body, "(integer)") {
		t.Errorf("read-only DBSIZE: %d %s", code, consoleAnswer(body))
	}
}

// Arguments travel byte for byte from the form to Redis and back into the
// reply, escaped as redis-cli shows them; a line that does not parse is a
// 400 that keeps the line in the form.
func TestConsoleQuotingRoundTrip(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	ctx := context.Background()
	f.redis.Client(0).Set(ctx, "a key\xff<script>", "v\xfe \"q\"\n<i>", 0)
	vera := newBrowserAs(t, f, "vera")
	code, body := consoleRun(vera, "0", `GET "a key\xff<script>"`)
	reply := html.UnescapeString(consoleAnswer(body))
	if code != http.StatusOK || !strings.Contains(reply, `"v\xfe \"q\"\n<i>"`) || strings.Contains(body, "<script>") || strings.Contains(body, "<i>") {
		t.Fatalf("%d %s", code, reply)
	}
	if code, body := consoleRun(vera, "0", `GET "unclosed`); code != http.StatusBadRequest || !strings.Contains(body, "quote") || !strings.Contains(body, `GET &#34;unclosed`) {
		t.Errorf("unbalanced quotes: %d %s", code, consoleAnswer(body))
	}
	if code, body := consoleRun(vera, "0", "SELECT 1"); code != http.StatusBadRequest || !strings.Contains(body, "database selector") {
		t.Errorf("SELECT: %d %s", code, consoleAnswer(body))
	}
	if code, body := consoleRun(vera, "0", "GET"); code != http.StatusOK || !strings.Contains(body, "(error) ERR wrong number of arguments") {
		t.Errorf("GET alone: %d %s", code, consoleAnswer(body))
	}
}

// consoleAnswer is the part of a console page after the form: the reply,
// refusal or error, for failure messages.
func consoleAnswer(body string) string {
	if i := strings.Index(body, `data-testid="console-run"`); i >= 0 {
		body = body[i:]
	}
	if i := strings.Index(body, `data-testid="console-history"`); i >= 0 {
		body = body[:i]
	}
	return body
}

// With --console-allow-dangerous an admin's FLUSHDB asks for the
// connection's name, is previewed with its scope in words, says it cannot
// be undone, runs on the database chosen only, and is audited; viewers
// are still refused.
func TestConsoleDangerousWithFlag(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	cfg := server.Config{Conns: []redisview.ConnConfig{{Name: "main", URL: rs.URL(0)}}, PackFor: map[string]string{"main": "eisland"},
		Auth: handlers.Auth{Users: testUsers(), Secret: []byte(testSecret)}, ConsoleAllowDangerous: true}
	f := startConsole(t, rs, cfg, nil).up(t)
	ctx := context.Background()
	for _, k := range []string{"a", "b", "c"} {
		rs.Client(3).Set(ctx, k, "v", 0)
	}
	rs.Client(4).Set(ctx, "kept", "v", 0)
	vera, ada := newBrowserAs(t, f, "vera"), newBrowserAs(t, f, "ada")
	if code, body := consoleRun(vera, "3", "FLUSHDB"); code != http.StatusForbidden {
		t.Fatalf("viewer FLUSHDB with the flag: %d %s", code, consoleAnswer(body))
	}
	code, body := consoleRun(ada, "3", "FLUSHDB")
	if code != http.StatusOK || !strings.Contains(body, `data-testid="console-dangerous"`) || rs.Client(3).DBSize(ctx).Val() != 3 {
		t.Fatalf("admin FLUSHDB: %d %s", code, consoleAnswer(body))
	}
	form := url.Values{"_csrf": {ada.csrf(route.ConsoleURL("main"))}, "kind": {cmdconsole.KindDangerous}, "conn": {"main"}, "db": {"3"},
		"arg.command": {"FLUSHDB"}, "arg.node": {""}, "arg.confirm": {"mian"}}
	if code, _, body := ada.do(http.MethodPost, route.Preview, form); code != http.StatusBadRequest || !strings.Contains(body, "type the connection") {
		t.Fatalf("mistyped name: %d", code)
	}
	form.Set("arg.confirm", "main")
	code, _, body = ada.do(http.MethodPost, route.Preview, form)
	m := regexpToken.FindStringSubmatch(body)
	if code != http.StatusOK || m == nil || !strings.Contains(body, "FLUSHDB deletes all 3 keys of database 3 on main") || !strings.Contains(body, "cannot be undone") {
		t.Fatalf("preview: %d %s", code, body)
	}
	if rs.Client(3).DBSize(ctx).Val() != 3 {
		t.Fatal("flushed before the confirmation")
	}
	code, _, body = ada.follow(http.MethodPost, route.Execute, url.Values{"_csrf": {ada.csrf(route.ConsoleURL("main"))}, "token": {html.UnescapeString(m[1])}})
	if code != http.StatusOK || rs.Client(3).DBSize(ctx).Val() != 0 || rs.Client(4).DBSize(ctx).Val() != 1 {
		t.Fatalf("execute: %d, db3 %d keys, db4 %d keys %s", code, rs.Client(3).DBSize(ctx).Val(), rs.Client(4).DBSize(ctx).Val(), body)
	}
	// The audit log lives in database 15 of this server: neither FLUSHALL
	// nor a FLUSHDB of its database may erase it.
	rs.Client(5).Set(ctx, "kept", "v", 0)
	for _, c := range []struct{ db, line, why string }{{"5", "FLUSHALL", "FLUSHALL would erase Keydeck"}, {"15", "FLUSHDB", "FLUSHDB would erase it"}} {
		form.Set("db", c.db)
		form.Set("arg.command", c.line)
		if code, _, body := ada.do(http.MethodPost, route.Preview, form); code != http.StatusForbidden || !strings.Contains(body, c.why) {
			t.Errorf("%s on db %s: %d %s", c.line, c.db, code, body)
		}
	}
	if rs.Client(5).DBSize(ctx).Val() != 1 || rs.Client(15).Exists(ctx, action.DefaultStream).Val() != 1 {
		t.Fatal("a refused flush erased data")
	}
	form.Set("db", "3")
	// Another dangerous command says what it does in the server's words.
	form.Set("arg.command", "CONFIG RESETSTAT")
	if code, _, body := ada.do(http.MethodPost, route.Preview, form); code != http.StatusOK || !strings.Contains(body, "Reset the stats returned by INFO") {
		t.Errorf("CONFIG RESETSTAT preview: %d %s", code, body)
	}
	recs, _, err := f.run.ReadAudit(ctx, action.Filter{})
	if err != nil || len(recs) == 0 || recs[0].Action != cmdconsole.KindDangerous || recs[0].User != "ada" {
		t.Fatalf("audit: %+v %v", recs, err)
	}
	// The outcome keeps the answer's type and size, never its text.
	for _, r := range recs {
		if r.Phase == action.PhaseOutcome && (r.Server == nil || string(r.Server.After) != "ran, answered a string of 2 bytes") {
			t.Errorf("outcome: %+v", r.Server)
		}
	}
}
