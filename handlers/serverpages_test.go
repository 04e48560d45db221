package handlers_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/handlers"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview/action"
)

func parseDoc(t *testing.T, body string) *goquery.Document {
	t.Helper()
	d, err := goquery.NewDocumentFromReader(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func count(d *goquery.Document, sel string) int { return d.Find(sel).Length() }

// The server and clients pages read for viewers; only admins get the
// forms that preview config-set and kill-client.
func TestServerAndClientsPages(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	ctx := context.Background()
	named := redis.NewClient(&redis.Options{Addr: f.redis.Addr, ClientName: "billing-worker"})
	t.Cleanup(func() { _ = named.Close() })
	named.Ping(ctx)
	vera, ada := newBrowser(t, f.srv.URL), newBrowser(t, f.srv.URL)
	vera.login("vera", "right-password")
	ada.login("ada", "right-password")

	code, _, body := vera.do(http.MethodGet, "/c/main/server", nil)
	if code != http.StatusOK {
		t.Fatalf("server page: %d %.300s", code, body)
	}
	d := parseDoc(t, body)
	for _, sel := range []string{`[data-testid=info-section][data-section=Memory]`, `[data-testid=info-field][data-name=mem_fragmentation_ratio]`,
		`[data-testid=info-field][data-name=keyspace_hit_ratio]`, `[data-testid=memory-doctor]`, `[data-testid=memory-field][data-name="total.allocated"]`,
		`[data-testid=config-param][data-param=maxmemory]`, `[data-testid=config-param][data-param=requirepass] [data-testid=withheld]`} {
		if count(d, sel) == 0 {
			t.Errorf("server page has no %s", sel)
		}
	}
	if n := count(d, `[data-testid=config-preview]`); n != 0 {
		t.Errorf("a viewer sees %d change forms", n)
	}
	_, _, body = ada.do(http.MethodGet, "/c/main/server", nil)
	if count(parseDoc(t, body), `[data-param=slowlog-log-slower-than] [data-testid=config-preview]`) != 1 {
		t.Error("an admin has no change form for slowlog-log-slower-than")
	}

	code, _, body = vera.do(http.MethodGet, "/c/main/clients?sort=-idle", nil)
	if code != http.StatusOK {
		t.Fatalf("clients page: %d %.300s", code, body)
	}
	d = parseDoc(t, body)
	if count(d, `[data-testid=client] [data-testid=client-name]:contains("billing-worker")`) != 1 || count(d, `[data-testid=client][data-own] [data-testid=own]`) == 0 {
		t.Errorf("named or own client missing:\n%.2000s", d.Find(`[data-testid=clients]`).Text())
	}
	if count(d, `[data-testid=kill]`) != 0 {
		t.Error("a viewer sees kill buttons")
	}
	_, _, body = vera.do(http.MethodGet, "/c/main/clients?q=billing", nil)
	d = parseDoc(t, body)
	if n := count(d, `[data-testid=client]`); n != 1 || !strings.Contains(d.Find(`[data-testid=clients-count]`).Text(), "1 of") {
		t.Errorf("filtered: %d rows, %q", n, d.Find(`[data-testid=clients-count]`).Text())
	}
	_, _, body = ada.do(http.MethodGet, "/c/main/clients", nil)
	d = parseDoc(t, body)
	if count(d, `[data-testid=client]:not([data-own]) [data-testid=kill]`) == 0 || count(d, `[data-testid=client][data-own] [data-testid=kill]`) != 0 {
		t.Error("kill buttons: want on other clients, never on Keydeck's own")
	}
	for path, want := range map[string]int{
		"/c/main/clients?sort=bogus":                    http.StatusBadRequest,
		"/c/main/clients?node=10.0.0.1:7000":            http.StatusNotFound,
		"/c/main/server?node=10.0.0.1:7000":             http.StatusNotFound,
		"/c/nosuch/server":                              http.StatusNotFound,
		"/c/main/clients?q=" + strings.Repeat("x", 300): http.StatusBadRequest,
	} {
		if code, _, _ := vera.do(http.MethodGet, path, nil); code != want {
			t.Errorf("%s: %d, want %d", path, code, want)
		}
	}
}

// config-set through the pages: previewed (current → new), confirmed,
// recorded, undone from the audit log; support and viewers refused.
func TestConfigSetThroughPages(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	ctx := context.Background()
	rc := f.redis.Client(0)
	rc.ConfigSet(ctx, "slowlog-log-slower-than", "10000")
	form := func(tok string) url.Values {
		return url.Values{"_csrf": {tok}, "kind": {action.KindConfigSet}, "conn": {"main"}, "db": {"0"},
			"arg.parameter": {"slowlog-log-slower-than"}, "arg.value": {"0"}, "arg.node": {""}}
	}
	for _, who := range []string{"vera", "sam"} {
		br := newBrowser(t, f.srv.URL)
		br.login(who, "right-password")
		if code, _, _ := br.do(http.MethodPost, "/actions/preview", form(br.csrf("/"))); code != http.StatusForbidden {
			t.Errorf("%s previewed config-set: %d", who, code)
		}
	}
	ada := newBrowser(t, f.srv.URL)
	ada.login("ada", "right-password")
	tok := ada.csrf("/")
	code, _, body := ada.do(http.MethodPost, "/actions/preview", form(tok))
	if code != http.StatusOK || !strings.Contains(body, "slowlog-log-slower-than: 10000 → 0") {
		t.Fatalf("preview: %d %.500s", code, body)
	}
	d := parseDoc(t, body)
	if !strings.Contains(d.Find(`[data-testid=confirm-server]`).Text(), "this server") || count(d, `[data-testid=not-undoable]`) != 0 {
		t.Errorf("confirmation: %q", d.Find(`[data-testid=confirm]`).Text())
	}
	m := regexpToken.FindStringSubmatch(body)
	code, _, body = ada.follow(http.MethodPost, "/actions/execute", url.Values{"_csrf": {tok}, "token": {m[1]}})
	if code != http.StatusOK || rc.ConfigGet(ctx, "slowlog-log-slower-than").Val()["slowlog-log-slower-than"] != "0" {
		t.Fatalf("execute: %d %.500s", code, body)
	}
	if !strings.Contains(body, `href="/c/main/server"`) {
		t.Error("the result page does not lead back to the server page")
	}
	recs, _, err := f.run.ReadAudit(ctx, action.Filter{Action: action.KindConfigSet})
	if err != nil || len(recs) < 2 || !recs[0].Undoable() || recs[0].Server == nil || string(recs[0].Server.After) != "0" {
		t.Fatalf("records: %v %+v", err, recs)
	}
	if _, _, body = ada.do(http.MethodGet, "/audit", nil); !strings.Contains(body, "main · this server") {
		t.Error("the audit page does not say the action was on the server")
	}
	code, _, body = ada.do(http.MethodGet, "/actions/undo?"+url.Values{"conn": {"main"}, "db": {"0"}, "record": {recs[0].ID}}.Encode(), nil)
	if code != http.StatusOK || !strings.Contains(body, "0 → 10000") {
		t.Fatalf("undo preview: %d %.500s", code, body)
	}
	m = regexpToken.FindStringSubmatch(body)
	if code, _, body = ada.follow(http.MethodPost, "/actions/execute", url.Values{"_csrf": {tok}, "token": {m[1]}}); code != http.StatusOK {
		t.Fatalf("undo: %d %.500s", code, body)
	}
	if v := rc.ConfigGet(ctx, "slowlog-log-slower-than").Val()["slowlog-log-slower-than"]; v != "10000" {
		t.Fatalf("after undo: %s", v)
	}
	// A changed setting since the preview: 409, nothing written.
	_, _, body = ada.do(http.MethodPost, "/actions/preview", form(tok))
	m = regexpToken.FindStringSubmatch(body)
	rc.ConfigSet(ctx, "slowlog-log-slower-than", "500")
	code, _, body = ada.follow(http.MethodPost, "/actions/execute", url.Values{"_csrf": {tok}, "token": {m[1]}})
	if code != http.StatusConflict || !strings.Contains(body, "The server changed since you previewed it") {
		t.Fatalf("changed since preview: %d %.500s", code, body)
	}
}

// kill-client through the pages: the preview says first it cannot be
// undone; the client is gone after.
func TestKillClientThroughPages(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	ctx := context.Background()
	victim := redis.NewClient(&redis.Options{Addr: f.redis.Addr, ClientName: "doomed", PoolSize: 1})
	t.Cleanup(func() { _ = victim.Close() })
	id := victim.ClientID(ctx).Val()
	ada := newBrowser(t, f.srv.URL)
	ada.login("ada", "right-password")
	tok := ada.csrf("/c/main/clients")
	code, _, body := ada.do(http.MethodPost, "/actions/preview", url.Values{"_csrf": {tok}, "kind": {action.KindKillClient}, "conn": {"main"}, "db": {"0"},
		"arg.id": {itoa64(id)}})
	if code != http.StatusOK {
		t.Fatalf("preview: %d %.500s", code, body)
	}
	d := parseDoc(t, body)
	if !strings.Contains(d.Find(`[data-testid=undo-note]`).Text(), "cannot be undone") || !strings.Contains(body, `name &#34;doomed&#34;`) {
		t.Fatalf("preview: %.1500s", d.Find(`[data-testid=confirm]`).Text())
	}
	m := regexpToken.FindStringSubmatch(body)
	if code, _, body = ada.follow(http.MethodPost, "/actions/execute", url.Values{"_csrf": {tok}, "token": {m[1]}}); code != http.StatusOK {
		t.Fatalf("execute: %d %.500s", code, body)
	}
	waitFor(t, "the client gone", func() bool {
		txt, err := f.redis.Client(0).Do(ctx, "CLIENT", "LIST", "ID", itoa64(id)).Text()
		return err == nil && strings.TrimSpace(txt) == ""
	})
	if code, _, _ := ada.do(http.MethodPost, "/actions/preview", url.Values{"_csrf": {tok}, "kind": {action.KindKillClient}, "conn": {"main"}, "db": {"0"},
		"arg.id": {itoa64(id)}}); code != http.StatusNotFound {
		t.Errorf("a vanished client: %d", code)
	}
}

// Read-only: no change forms, and a posted preview is refused.
func TestServerPagesReadOnly(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, func(a *handlers.Auth) { a.ReadOnly = true })
	ada := newBrowser(t, f.srv.URL)
	ada.login("ada", "right-password")
	_, _, body := ada.do(http.MethodGet, "/c/main/server", nil)
	if count(parseDoc(t, body), `[data-testid=config-preview]`) != 0 {
		t.Error("change forms on a read-only console")
	}
	_, _, body = ada.do(http.MethodGet, "/c/main/clients", nil)
	if count(parseDoc(t, body), `[data-testid=kill]`) != 0 {
		t.Error("kill buttons on a read-only console")
	}
	code, _, _ := ada.do(http.MethodPost, "/actions/preview", url.Values{"_csrf": {ada.csrf("/")}, "kind": {action.KindConfigSet}, "conn": {"main"}, "db": {"0"},
		"arg.parameter": {"maxmemory"}, "arg.value": {"1"}})
	if code != http.StatusForbidden {
		t.Errorf("read-only preview: %d", code)
	}
}

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }

// A Redis user without CONFIG, MEMORY and CLIENT LIST: each panel says
// the server refused, the rest of the page still shows.
func TestServerPagesDegradeWhenRefused(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	if err := rs.Client(0).Do(context.Background(), "ACL", "SETUSER", "looker", "on", ">pw", "~*", "&*", "+@all", "-config", "-memory", "-client|list").Err(); err != nil {
		t.Fatal(err)
	}
	f := newAuthFixtureURL(t, rs, "redis://looker:pw@"+rs.Addr+"/0", nil)
	vera := newBrowser(t, f.srv.URL)
	vera.login("vera", "right-password")
	code, _, body := vera.do(http.MethodGet, "/c/main/server", nil)
	d := parseDoc(t, body)
	if code != http.StatusOK || count(d, `[data-testid=info-field]`) == 0 {
		t.Fatalf("server page: %d, %d INFO fields", code, count(d, `[data-testid=info-field]`))
	}
	for _, sel := range []string{"config-error", "memory-error", "doctor-error"} {
		if txt := d.Find(`[data-testid=` + sel + `]`).Text(); !strings.Contains(txt, "refused by the server") || !strings.Contains(txt, "ACL") {
			t.Errorf("%s: %q", sel, txt)
		}
	}
	code, _, body = vera.do(http.MethodGet, "/c/main/clients", nil)
	if txt := parseDoc(t, body).Find(`[data-testid=clients-error]`).Text(); code != http.StatusOK || !strings.Contains(txt, "ACL") {
		t.Errorf("clients page: %d %q", code, txt)
	}
}
