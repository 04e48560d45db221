package handlers_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/keydeck/keydeck/redisview/action"
)

// On a cluster the server pages read one node, picked with ?node=; a
// setting changed from a node's page changes that node only.
func TestServerPagesPerClusterNode(t *testing.T) {
	t.Parallel()
	f, cl := clusterConsole(t)
	ctx := context.Background()
	prim := cl.Primaries()
	other := prim[1]
	b := newBrowser(t, f.srv.URL)
	code, _, body := b.do(http.MethodGet, "/c/main/server", nil)
	d := parseDoc(t, body)
	if code != http.StatusOK || count(d, `[data-testid=node-option]`) < len(prim) {
		t.Fatalf("server page: %d, %d node options", code, count(d, `[data-testid=node-option]`))
	}
	code, _, body = b.do(http.MethodGet, "/c/main/clients?node="+url.QueryEscape(other.Addr), nil)
	d = parseDoc(t, body)
	if code != http.StatusOK || !strings.Contains(d.Find(`[data-testid=server-node]`).Text(), other.Addr) || count(d, `[data-testid=client]`) == 0 {
		t.Fatalf("clients of %s: %d %q", other.Addr, code, d.Find(`[data-testid=server-node]`).Text())
	}
	if count(d, `[data-testid=kill]`) == 0 || d.Find(`input[name="arg.node"]`).First().AttrOr("value", "") != other.Addr {
		t.Errorf("kill forms do not name node %s", other.Addr)
	}
	// Keydeck's own round trips are one histogram per connection: the
	// node's latency page says they cover every node.
	code, _, body = b.do(http.MethodGet, "/c/main/latency?node="+url.QueryEscape(other.Addr), nil)
	if d = parseDoc(t, body); code != http.StatusOK || !strings.Contains(d.Find(`[data-testid=own-scope]`).Text(), "any node of this cluster connection") {
		t.Errorf("a node's latency page: %d, own round trips scope %q", code, d.Find(`[data-testid=own-scope]`).Text())
	}
	if code, _, _ := b.do(http.MethodGet, "/c/main/server?node=127.0.0.1:1", nil); code != http.StatusNotFound {
		t.Errorf("an unknown node: %d", code)
	}

	// Without ?node= a cluster's action acts on its first primary, and
	// says which.
	own := url.Values{"kind": {action.KindConfigSet}, "conn": {"main"}, "db": {"0"}, "arg.parameter": {"maxmemory-samples"}, "arg.value": {"9"}}
	_, _, body = b.do(http.MethodGet, "/actions/preview?"+own.Encode(), nil)
	if txt := parseDoc(t, body).Find(`[data-testid=confirm-server]`).Text(); !strings.Contains(txt, "server 127.0.0.1:") {
		t.Errorf("a cluster's own server is not named: %q", txt)
	}

	before := prim[0].Client(0).ConfigGet(ctx, "maxmemory-samples").Val()["maxmemory-samples"]
	q := url.Values{"kind": {action.KindConfigSet}, "conn": {"main"}, "db": {"0"}, "arg.parameter": {"maxmemory-samples"}, "arg.value": {"9"}, "arg.node": {other.Addr}}
	code, _, body = b.do(http.MethodGet, "/actions/preview?"+q.Encode(), nil)
	if code != http.StatusOK || !strings.Contains(parseDoc(t, body).Find(`[data-testid=confirm-server]`).Text(), "server "+other.Addr) {
		t.Fatalf("preview: %d %.500s", code, body)
	}
	m, tok := regexpToken.FindStringSubmatch(body), csrfRe.FindStringSubmatch(body)
	if code, _, body = b.follow(http.MethodPost, "/actions/execute", url.Values{"_csrf": {tok[1]}, "token": {m[1]}}); code != http.StatusOK {
		t.Fatalf("execute: %d %.500s", code, body)
	}
	if !strings.Contains(body, "/c/main/server?node="+url.QueryEscape(other.Addr)) {
		t.Error("the result does not lead back to the node's page")
	}
	if v := other.Client(0).ConfigGet(ctx, "maxmemory-samples").Val()["maxmemory-samples"]; v != "9" {
		t.Errorf("on %s: %s", other.Addr, v)
	}
	if v := prim[0].Client(0).ConfigGet(ctx, "maxmemory-samples").Val()["maxmemory-samples"]; v != before {
		t.Errorf("another node changed: %s, was %s", v, before)
	}
}
