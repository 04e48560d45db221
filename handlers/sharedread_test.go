package handlers_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/handlers"
	"github.com/keydeck/keydeck/internal/route"
)

// Reloading a server page, or many viewers at once, runs its reads once:
// the result serves everyone for a couple of seconds. Globs are bounded.
func TestServerPagesShareTheirReads(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	vera, sam := newBrowserAs(t, f, "vera"), newBrowserAs(t, f, "sam")
	for _, p := range []struct{ url, cmd string }{
		{route.ClientsURL("main"), "client|list"},
		{route.ServerInfoURL("main"), "memory|doctor"},
		{route.PubSubURL("main") + "?pattern=a*", "pubsub|channels"},
		{route.SlowlogURL("main"), "slowlog|get"},
		{route.LatencyURL("main"), "latency|latest"},
	} {
		before := f.redis.CommandCount(t, p.cmd)
		for _, b := range []*browser{vera, sam, vera, sam} {
			if code, _, _ := b.do(http.MethodGet, p.url, nil); code != http.StatusOK {
				t.Fatalf("%s: %d", p.url, code)
			}
		}
		if n := f.redis.CommandCount(t, p.cmd) - before; n != 1 {
			t.Errorf("4 loads of %s ran %s %d times, want once", p.url, p.cmd, n)
		}
	}
	for _, bad := range []string{
		"?pattern=" + url.QueryEscape(strings.Repeat("a", 257)),
		"?pattern=" + url.QueryEscape(strings.Repeat("*a", 9)+"b"),
		"?watch=" + url.QueryEscape(strings.Repeat("?", 9)) + "&mode=pattern",
	} {
		if code, _, body := sam.do(http.MethodGet, route.PubSubURL("main")+bad, nil); code != http.StatusBadRequest ||
			!(strings.Contains(body, "at most 256 bytes") || strings.Contains(body, "at most 8 wildcards")) {
			t.Errorf("%.60s: %d, want 400 saying the bound", bad, code)
		}
	}
}

// A stream's groups are read at most every 10 s per key, however many
// load or poll its key page; a group created at $ reads "unknown".
func TestStreamGroupsReadShared(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	ctx := context.Background()
	rc := f.redis.Client(0)
	defer rc.Close()
	rc.XAdd(ctx, &redis.XAddArgs{Stream: "plain:events", Values: []any{"n", 1}})
	rc.XGroupCreate(ctx, "plain:events", "late", "$")
	vera, sam := newBrowserAs(t, f, "vera"), newBrowserAs(t, f, "sam")
	before := f.redis.CommandCount(t, "xinfo|groups")
	for _, b := range []*browser{vera, sam, vera} {
		code, _, body := b.do(http.MethodGet, route.KeyURL("main", 0, "plain:events"), nil)
		if code != http.StatusOK || !strings.Contains(body, "entries read unknown") {
			t.Fatalf("key page: %d, entries read unknown said: %v", code, strings.Contains(body, "entries read unknown"))
		}
	}
	if n := f.redis.CommandCount(t, "xinfo|groups") - before; n != 1 {
		t.Errorf("3 loads ran XINFO GROUPS %d times, want once", n)
	}
}

// The slowlog page can hide Keydeck's own entries, says its reads may be
// logged, and its live view reads at most every 5 s: at threshold 0 it
// does not fill the log it shows.
func TestSlowlogHidesOwnAndPollsSlowly(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	ctx := context.Background()
	rc := f.redis.Client(0)
	defer rc.Close()
	rc.ConfigSet(ctx, "slowlog-log-slower-than", "0")
	rc.Set(ctx, "plain:app", "APPVALUE", 0)
	vera := newBrowserAs(t, f, "vera")
	_, _, body := vera.do(http.MethodGet, route.SlowlogURL("main"), nil)
	if !strings.Contains(body, `data-testid="slow-own"`) || !strings.Contains(body, `data-testid="slowlog-own-note"`) || !strings.Contains(body, "own=hide") {
		t.Fatal("the slowlog shows no own entry, or no note and toggle about them")
	}
	code, _, body := vera.do(http.MethodGet, route.SlowlogURL("main")+"?own=hide", nil)
	if code != http.StatusOK || strings.Contains(body, `data-testid="slow-own"`) || !strings.Contains(body, "APPVALUE") || !strings.Contains(body, " own hidden") {
		t.Errorf("?own=hide: %d, own %v app %v hidden %v", code, strings.Contains(body, `data-testid="slow-own"`), strings.Contains(body, "APPVALUE"), strings.Contains(body, " own hidden"))
	}
	if code, _, _ := vera.do(http.MethodGet, route.SlowlogURL("main")+"?own=maybe", nil); code != http.StatusBadRequest {
		t.Errorf("?own=maybe: %d, want 400", code)
	}
	ws, code := wsAs(t, vera, handlers.SlowlogTopic{Conn: "main", HideOwn: true}.String())
	if ws == nil {
		t.Fatalf("slowlog websocket: %d", code)
	}
	readUntil(t, ws, `data-testid="slow-entry"`)
	// The hub polls every second; the slowlog is read once in 3 s at most.
	if n := f.redis.CountDuring(t, "slowlog|get", 3*time.Second); n > 1 {
		t.Errorf("the live slowlog read the server %d times in 3 s, want at most once", n)
	}
}
