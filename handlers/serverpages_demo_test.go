package handlers_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview/action"
)

// The embedded demo is what a new user sees first: every server page shows
// the demo server's answers (no panel refused, none disconnected), the
// console runs a read and refuses KEYS from the demo's own command table,
// and an admin's config-set and console write take effect on the demo
// server and are undone.
func TestServerPagesOnTheDemo(t *testing.T) {
	t.Parallel()
	f, conns := demoConsole(t)
	ada := newBrowserAs(t, f, "ada")
	pages := []struct {
		url  string
		want []string // data-testid hooks the page must show
	}{
		{route.ServerInfoURL("eisland"), []string{"info-section", "memory-stats", "memory-doctor", "config-param", "config-change"}},
		{route.ClientsURL("eisland"), []string{"client", "own", "kill"}},
		{route.SlowlogURL("eisland"), []string{"slowlog-threshold", "preview"}},
		{route.LatencyURL("eisland"), []string{"latency-threshold", "latency-off", "own-latency"}},
		{route.PubSubURL("gateway"), []string{"pubsub-counts", "watch-form"}},
		{route.ConsoleURL("vertique"), []string{"console-form", "console-history"}},
	}
	for _, p := range pages {
		code, _, body := ada.do(http.MethodGet, p.url, nil)
		if code != http.StatusOK {
			t.Errorf("%s: %d", p.url, code)
			continue
		}
		doc := parseDoc(t, body)
		for _, id := range p.want {
			if doc.Find(`[data-testid="`+id+`"]`).Length() == 0 {
				t.Errorf("%s shows no %s", p.url, id)
			}
		}
		for _, bad := range []string{"disconnected", "slowlog-error", "latency-error", "pubsub-error", "console-error"} {
			if doc.Find(`[data-testid="`+bad+`"]`).Length() != 0 {
				t.Errorf("%s shows %s: %s", p.url, bad, doc.Find(`[data-testid="`+bad+`"]`).Text())
			}
		}
		if strings.Contains(body, "refused by the server") || strings.Contains(body, "does not offer") {
			t.Errorf("%s says a command was refused on the demo", p.url)
		}
	}

	run := func(line string) (int, string) {
		code, _, body := ada.do(http.MethodPost, route.ConsoleURL("eisland"), url.Values{"_csrf": {ada.csrf(route.ConsoleURL("eisland"))}, "command": {line}, "db": {"14"}})
		return code, body
	}
	if code, body := run("DBSIZE"); code != http.StatusOK || !strings.Contains(consoleAnswer(body), "(integer)") {
		t.Errorf("console DBSIZE on the demo: %d %s", code, consoleAnswer(body))
	}
	if code, body := run("KEYS *"); code != http.StatusForbidden {
		t.Errorf("console KEYS on the demo: %d %s", code, consoleAnswer(body))
	}

	ctx := context.Background()
	opt, err := redis.ParseURL(conns[0].URL)
	if err != nil {
		t.Fatal(err)
	}
	opt.DB = 14
	direct := redis.NewClient(opt)
	t.Cleanup(func() { direct.Close() })
	tok := ada.csrf("/")
	confirm := func(what string, code int, body string) string {
		t.Helper()
		m := regexpToken.FindStringSubmatch(body)
		if code != http.StatusOK || m == nil {
			t.Fatalf("%s preview: %d %s", what, code, parseDoc(t, body).Find(`main`).Text())
		}
		code, _, body = ada.follow(http.MethodPost, route.Execute, url.Values{"_csrf": {tok}, "token": {m[1]}})
		if code != http.StatusOK {
			t.Fatalf("%s execute: %d %s", what, code, parseDoc(t, body).Find(`main`).Text())
		}
		return body
	}
	code, _, body := ada.do(http.MethodPost, route.Preview, url.Values{"_csrf": {tok}, "kind": {action.KindConfigSet}, "conn": {"eisland"}, "db": {"0"},
		"arg.parameter": {"latency-monitor-threshold"}, "arg.value": {"100"}, "arg.node": {""}})
	confirm("config-set", code, body)
	if v := direct.ConfigGet(ctx, "latency-monitor-threshold").Val()["latency-monitor-threshold"]; v != "100" {
		t.Errorf("latency-monitor-threshold on the demo after config-set: %q", v)
	}
	if _, _, body := ada.do(http.MethodGet, route.LatencyURL("eisland"), nil); parseDoc(t, body).Find(`[data-testid="latency-off"]`).Length() != 0 {
		t.Error("the latency page still says monitoring is off")
	}

	key := "demo:console:\xff <b>"
	form := url.Values{"_csrf": {tok}, "command": {`SET "demo:console:\xff <b>" "v1"`}, "db": {"14"}}
	code, _, body = ada.do(http.MethodPost, route.ConsoleURL("eisland"), form)
	confirm("console SET", code, body)
	if v := direct.Get(ctx, key).Val(); v != "v1" {
		t.Fatalf("the console's SET on the demo: %q", v)
	}
	recs, _, err := f.run.ReadAudit(ctx, action.Filter{})
	if err != nil || len(recs) == 0 {
		t.Fatalf("audit: %v", err)
	}
	code, _, body = ada.do(http.MethodGet, route.Undo{Conn: "eisland", DB: 14, Record: recs[0].ID}.URL(), nil)
	confirm("undo", code, body)
	if n := direct.Exists(ctx, key).Val(); n != 0 {
		t.Errorf("after undo the key the console created still exists on the demo")
	}
}
