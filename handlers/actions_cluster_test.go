package handlers_test

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/internal/server"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/action"
)

// clusterConsole is an open console whose connection "main" is a 3-primary
// cluster (gateway pack), detected; the audit log is on a standalone server.
func clusterConsole(t *testing.T) (*console, *redistest.Cluster) {
	t.Helper()
	cl := redistest.StartCluster(t)
	audit := redistest.Start(t)
	f := startConsole(t, audit, server.Config{Conns: []redisview.ConnConfig{{Name: "main", URL: cl.URL()}},
		PackFor: map[string]string{"main": "gateway"}}, nil).up(t)
	redistest.Eventually(t, 20*time.Second, "the console detects the cluster", func() bool { return f.reg.All()[0].IsCluster() })
	return f, cl
}

// On a cluster, an action whose keys span slots (a gateway reservation
// and its concurrency set) is refused by the preview page and the API's
// preview, each naming the keys and their slots; nothing is written. One
// key's action previews as usual.
func TestClusterPreviewRefusesKeysAcrossSlots(t *testing.T) {
	t.Parallel()
	f, cl := clusterConsole(t)
	ctx := context.Background()
	cc := cl.Client()
	const res, set = "q:reserved:req_old", "q:conc:gk_a"
	cc.SAdd(ctx, set, "req_a1")
	cc.Set(ctx, res, 4096, 0)
	want := []string{
		fmt.Sprintf("%q (slot %d)", res, action.Slot(res)),
		fmt.Sprintf("%q (slot %d)", set, action.Slot(set)),
		"must share a slot",
	}
	const title = "Keys in more than one cluster slot"

	b := newBrowser(t, f.srv.URL)
	q := "/actions/preview?" + url.Values{"kind": {action.KindReleaseReservation}, "conn": {"main"}, "db": {"0"}, "key": {res}}.Encode()
	code, _, body := b.do(http.MethodGet, q, nil, "Sec-Fetch-Site", "same-origin")
	if code != http.StatusBadRequest {
		t.Fatalf("preview page: %d, want 400: %.500s", code, body)
	}
	text := html.UnescapeString(body)
	for _, s := range append(want, title) {
		if !strings.Contains(text, s) {
			t.Errorf("the preview page does not say %q: %.2000s", s, text)
		}
	}

	c := newAPIClient(t, f)
	p := problemOf(t, c, http.MethodPost, "/api/v1/actions/preview",
		map[string]any{"kind": action.KindReleaseReservation, "conn": "main", "db": 0, "key": res}, http.StatusBadRequest)
	for _, s := range want {
		if !strings.Contains(p.Detail, s) {
			t.Errorf("the API's preview does not say %q: %+v", s, p)
		}
	}
	if p.Title != title {
		t.Errorf("the API's problem is titled %q, want %q", p.Title, title)
	}
	if cc.Exists(ctx, res).Val() != 1 || cc.Exists(ctx, set).Val() != 1 {
		t.Fatal("a key was removed")
	}

	// One key: previewed as on a single server.
	if code, body := c.do(http.MethodPost, "/api/v1/actions/preview", map[string]any{"kind": "delete-key", "conn": "main", "db": 0, "key": res}); code != http.StatusOK {
		t.Fatalf("one key's preview: %d %s", code, body)
	}
}
