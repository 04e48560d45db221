package handlers_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

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
