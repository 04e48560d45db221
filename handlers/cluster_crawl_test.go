package handlers_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/demo"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview"
)

// Every page of a connection to a Redis Cluster (3 primaries, 3
// replicas) holding the vertique and LLM gateway seeds works: the crawl
// of every family opens a key of each (keys live on every primary), a
// vertique caller's bucket is found through its derived key, and the
// overview, database, search, user, limits, locks, quotas, bans and
// violations pages answer without an error state, in HTML and JSON.
func TestCrawlSeededCluster(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a cluster and crawls every family of two seeds")
	}
	cl := redistest.StartCluster(t)
	ctx, now := context.Background(), time.Now()
	if err := demo.SeedVertique(ctx, cl.Client(), now, demo.DemoSecret); err != nil {
		t.Fatal(err)
	}
	if err := demo.SeedGateway(ctx, cl.Client(), now); err != nil {
		t.Fatal(err)
	}
	// Two connections to one cluster, one pack each: each sees the other's
	// keys as unmatched, and the crawl opens those groups too.
	conns := []redisview.ConnConfig{{Name: "vq", URL: cl.URL()}, {Name: "gw", URL: cl.URL()}}
	var f *console
	c := crawlWith(t, conns, map[string]string{"vq": "vertique", "gw": "gateway"}, func(c *console) { f = c })
	if c.families < 5 || c.keyPages < c.families*9/10 || c.prefixes < 2 {
		t.Errorf("crawled %d families, %d key pages, %d unmatched groups", c.families, c.keyPages, c.prefixes)
	}
	// A key of each primary opens, its value read on its slot's node.
	for _, p := range cl.Primaries() {
		keys, _, err := p.Client(0).Scan(ctx, 0, "vertique:*", 100).Result()
		if err != nil || len(keys) == 0 {
			t.Fatalf("%s: no vertique key (%v)", p.Addr, err)
		}
		code, _, body := get(t, f.srv.URL+route.KeyURL("vq", 0, keys[0]))
		if d := doc(t, body); code != http.StatusOK || d.Find(`[data-testid="key-value"]`).Length() != 1 || d.Find(`[data-testid="value-error"]`).Length() != 0 {
			t.Errorf("%s's key %q: %d %.300s", p.Addr, keys[0], code, body)
		}
	}
	var b struct {
		State  string
		Bucket *struct{ Tokens int64 }
	}
	code, _, body := get(t, f.srv.URL+"/api/v1/connections/vq/vertique/bucket?policy=login-attempts&revision=3&key=alice.w&enc=parts", "Accept", "application/json")
	if err := json.Unmarshal([]byte(body), &b); code != http.StatusOK || err != nil || b.State != "found" || b.Bucket == nil {
		t.Errorf("alice.w's bucket on a cluster: %d %v %.400s", code, err, body)
	}
	pages := map[string][]string{
		"vq": {route.OverviewURL("vq"), route.DatabaseURL("vq", 0), route.SearchURL("vq", "*"), route.VertiqueURL("vq"),
			route.VertiqueURL("vq") + "?policy=login-attempts&revision=3&enc=parts&key=" + url.QueryEscape("alice.w"), route.ViolationsURL("vq")},
		"gw": {route.OverviewURL("gw"), route.DatabaseURL("gw", 0), route.QuotasURL("gw"), route.LimitsURL("gw"), route.LocksURL("gw"),
			route.UserURL("gw", "alice"), route.BansURL("gw"), route.ViolationsURL("gw"), route.SearchURL("gw", "gw:*")},
	}
	for conn, urls := range pages {
		for _, u := range urls {
			code, _, body := get(t, f.srv.URL+u)
			if code != http.StatusOK {
				t.Errorf("%s: %d %.300s", u, code, body)
				continue
			}
			for _, bad := range []string{"-error\"", "CROSSSLOT", "MOVED", "error-page"} {
				if i := strings.Index(body, bad); i >= 0 {
					t.Errorf("%s (%s): the page shows %q: …%.300s", u, conn, bad, body[max(0, i-200):])
				}
			}
			jcode, _, js := get(t, f.srv.URL+u, "Accept", "application/json")
			if jcode != http.StatusOK || strings.Contains(js, "CROSSSLOT") || strings.Contains(js, "MOVED") {
				t.Errorf("%s JSON: %d %.300s", u, jcode, js)
			}
		}
	}
	serverPagesPerNode(t, f, cl)
}

// serverPagesPerNode opens the slowlog, latency and Pub/Sub pages of each
// primary: each reads its node (picked in the node picker), none shows an
// error state.
func serverPagesPerNode(t *testing.T, f *console, cl *redistest.Cluster) {
	t.Helper()
	for _, p := range cl.Primaries() {
		for _, u := range []string{route.SlowlogURL("vq"), route.LatencyURL("vq"), route.PubSubURL("vq")} {
			u = route.OnNode(u, p.Addr)
			code, _, body := get(t, f.srv.URL+u)
			d := doc(t, body)
			cur := d.Find(`[data-testid="node-option"][aria-current="page"]`).Text()
			if code != http.StatusOK || !strings.Contains(cur, p.Addr) || strings.Contains(body, "-error\"") || strings.Contains(body, `data-testid="disconnected"`) {
				t.Errorf("%s: %d, node picked %q: %.300s", u, code, cur, body)
			}
		}
	}
}
