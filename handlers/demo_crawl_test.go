package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/handlers"
	"github.com/keydeck/keydeck/internal/demo"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/internal/server"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/limits"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/redisview/stats"
)

// crawlCounts counts what one crawl checked.
type crawlCounts struct{ secrets, decoded, prefixes, families, keyPages int }

// wantAll checks a crawl of all three seed systems reached what they hold.
func (c *crawlCounts) wantAll(t *testing.T) {
	t.Helper()
	if c.decoded < 20 || c.secrets == 0 {
		t.Errorf("only %d decoded panels and %d sensitive values checked", c.decoded, c.secrets)
	}
	if c.families < 20 || c.keyPages < c.families*9/10 {
		t.Errorf("crawled %d families and %d key pages: the data is smaller than expected, or its keys vanish", c.families, c.keyPages)
	}
}

// crawlDBPage is what the crawl reads of a database page: its JSON
// (get-db-stats: the sweep, the families) and the links of its HTML's
// unmatched groups.
type crawlDBPage struct {
	Sweep struct {
		CompletedAt *time.Time `json:"completed_at"`
	}
	Families []struct {
		ID, Role  string
		Keys      int64
		Sensitive bool
	}
	Unmatched []struct{ Prefix, Keys, Href string } `json:"-"`
}

// Every key a person can reach on the embedded demo shows its value: for
// every connection, every database with keys, every family row of the
// database page, the family's key list opens with rows, and the first
// key's page shows a value section (or, for a sensitive family, says it is
// withheld and shows none of the value's bytes, in HTML or JSON), and for
// a role with a decoder a decoded panel that decoded it.
func TestCrawlTheDemo(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("crawls every family of the demo")
	}
	conns := demoConns(t)
	crawl(t, conns, nil).wantAll(t)
}

// The same crawl on real redis-servers holding the demo's seeds: real
// SCAN returns COUNT-sized pages, not the whole database at once.
func TestCrawlSeededRedis(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("crawls every family of the seeds")
	}
	ctx := context.Background()
	now := time.Now()
	ei, gw, vq := redistest.Start(t), redistest.Start(t), redistest.Start(t)
	if err := demo.SeedEIsland(ctx, func(db int) redis.Cmdable { return ei.Client(db) }, now); err != nil {
		t.Fatal(err)
	}
	if err := demo.SeedGateway(ctx, gw.Client(0), now); err != nil {
		t.Fatal(err)
	}
	if err := demo.SeedVertique(ctx, vq.Client(0), now, demo.DemoSecret); err != nil {
		t.Fatal(err)
	}
	crawl(t, []redisview.ConnConfig{{Name: "eisland", URL: ei.URL(0)}, {Name: "gateway", URL: gw.URL(0)}, {Name: "vertique", URL: vq.URL(0)}},
		map[string]string{"eisland": "eisland", "gateway": "gateway", "vertique": "vertique"}).wantAll(t)
}

// crawl starts a console on conns and walks every family row of every
// database with keys (read straight from each server).
func crawl(t *testing.T, conns []redisview.ConnConfig, packFor map[string]string) *crawlCounts {
	t.Helper()
	return crawlWith(t, conns, packFor, nil)
}

// crawlWith is crawl, handing the console to seen (when not nil) first.
func crawlWith(t *testing.T, conns []redisview.ConnConfig, packFor map[string]string, seen func(*console)) *crawlCounts {
	t.Helper()
	crawled := &crawlCounts{}
	rs := redistest.Start(t)
	f := startConsole(t, rs, server.Config{Demo: true, Conns: conns, PackFor: packFor, Sweep: stats.SweepBudget{KeysPerSec: 1_000_000, Count: 1000},
		// Production cadence: the crawl waits for no change to show, and faster
		// background reads would only take CPU from its requests.
		LimitsBudget: limits.DefaultBudget, QuotaInterval: time.Second,
		// The demo's seeds derive their buckets with the demo's secret.
		Vertique: handlers.VertiqueSecret{Secret: []byte(demo.DemoSecret), From: "the demo", Demo: true}}, nil).up(t)
	if seen != nil {
		seen(f)
	}
	families, keyPages := 0, 0
	for i, dc := range conns {
		conn := f.reg.All()[i]
		waitFor(t, dc.Name+" gets a pack", func() bool { return conn.Pack() != nil })
		dbs, direct := crawlDirect(t, dc.URL)
		for _, db := range dbs {
			dbc := direct(db)
			page := crawlDB(t, f, dc.Name, db)
			// Every unmatched-prefix group lists its keys.
			for _, u := range page.Unmatched {
				if u.Href == "" || strings.TrimSpace(u.Keys) == "0" {
					continue
				}
				code, _, body := get(t, f.srv.URL+u.Href)
				if n := doc(t, body).Find(`[data-testid="key-row"]`).Length(); code != http.StatusOK || n == 0 {
					t.Errorf("%s db%d: unmatched group %q (%s keys): list %d with %d rows", dc.Name, db, u.Prefix, u.Keys, code, n)
				}
				crawled.prefixes++
			}
			for _, fam := range page.Families {
				if fam.Keys == 0 {
					continue
				}
				families++
				pack := conn.Pack()
				if crawlFamily(t, crawled, f, dbc, pack.Classifier(), dc.Name, db, fam.ID, fam.Role, pack.Family(fam.ID)) {
					keyPages++
				}
			}
		}
	}
	crawled.families, crawled.keyPages = families, keyPages
	t.Logf("crawled %d family key lists and %d key pages: %d decoded panels, %d sensitive value bytes checked absent, %d unmatched groups",
		families, keyPages, crawled.decoded, crawled.secrets, crawled.prefixes)
	return crawled
}

// crawlDB reads a database page's JSON once its first sweep completed.
func crawlDB(t *testing.T, f *console, conn string, db int) crawlDBPage {
	t.Helper()
	var page crawlDBPage
	redistest.Eventually(t, 30*time.Second, fmt.Sprintf("%s db%d: a completed sweep", conn, db), func() bool {
		code, _, body := get(t, f.srv.URL+route.DatabaseURL(conn, db), "Accept", "application/json")
		if code != http.StatusOK {
			t.Fatalf("%s db%d: %d %.300s", conn, db, code, body)
		}
		page = crawlDBPage{}
		if err := json.Unmarshal([]byte(body), &page); err != nil {
			t.Fatalf("%s db%d: %v", conn, db, err)
		}
		return page.Sweep.CompletedAt != nil
	})
	_, _, body := get(t, f.srv.URL+route.DatabaseURL(conn, db))
	doc(t, body).Find(`[data-testid="unmatched-prefix"]`).Each(func(_ int, s *goquery.Selection) {
		href, _ := s.Find(`[data-testid="prefix-link"]`).Attr("href")
		page.Unmatched = append(page.Unmatched, struct{ Prefix, Keys, Href string }{s.Find(`[data-testid="prefix-link"]`).Text(), s.Find("td").Eq(1).Text(), href})
	})
	return page
}

// crawlFamily opens a family's key list and its first key still there;
// false when every listed key vanished before its page opened.
func crawlFamily(t *testing.T, crawled *crawlCounts, f *console, dbc redis.UniversalClient, cls *schema.Classifier, conn string, db int, id, role string, fam *schema.Family) bool {
	t.Helper()
	where := fmt.Sprintf("%s db%d %s", conn, db, id)
	list := route.FamilyKeysURL(conn, db, id)
	before := familyKeysNow(t, dbc, cls, db, fam)
	code, _, body := get(t, f.srv.URL+list)
	_, _, listJSON := get(t, f.srv.URL+list, "Accept", "application/json")
	if code != http.StatusOK {
		t.Errorf("%s: key list %d %.300s", where, code, body)
		return false
	}
	rows := doc(t, body).Find(`[data-testid="key-row"]`)
	if rows.Length() == 0 {
		// The demo's locks live seconds: the sweep may have counted a key
		// that expired since, and a new one may appear after the list was
		// read. Empty is wrong only for a key the server held both before
		// and after the list was read.
		if left := stillThere(before, familyKeysNow(t, dbc, cls, db, fam)); len(left) > 0 {
			t.Errorf("%s: the server holds %d keys of the family (%q…), the key list shows none: %.1500s", where, len(left), left[0], body)
		}
		return false
	}
	if fam.Sensitive && strings.Contains(body, `data-testid="key-summary"`) && !strings.Contains(doc(t, body).Find(`[data-testid="key-summary"]`).First().Text(), "withheld") {
		t.Errorf("%s: a sensitive family's list shows a summary", where)
	}
	var hrefs []string
	rows.Find(`a[data-testid="key-link"]`).Each(func(_ int, s *goquery.Selection) {
		if h, ok := s.Attr("href"); ok {
			hrefs = append(hrefs, h)
		}
	})
	for _, href := range hrefs {
		code, _, page := get(t, f.srv.URL+href)
		if code == http.StatusNotFound {
			continue // expired or deleted since: the next one
		}
		if code != http.StatusOK {
			t.Errorf("%s: key page %s: %d %.300s", where, href, code, page)
			return false
		}
		d := doc(t, page)
		key := crawlKeyOf(t, href)
		if d.Find(`[data-testid="key-value"]`).Length() != 1 {
			t.Errorf("%s: key page %s has no value section", where, href)
		}
		if e := d.Find(`[data-testid="value-error"]`); e.Length() != 0 {
			t.Errorf("%s: %s: the value could not be shown: %s", where, key, e.Text())
		}
		if fam.Sensitive {
			if d.Find(`[data-testid="value-withheld"]`).Length() != 1 {
				t.Errorf("%s: a sensitive key's page does not say its value is withheld", where)
			}
			_, _, js := get(t, f.srv.URL+href, "Accept", "application/json")
			for _, v := range crawlValues(t, dbc, key) {
				if len(v) < 6 {
					continue // too short to tell from the page's own text
				}
				crawled.secrets++
				for _, form := range []string{v, html.EscapeString(v), strconv.Quote(v)[1 : len(strconv.Quote(v))-1]} {
					if strings.Contains(page, form) || strings.Contains(js, form) || strings.Contains(body, form) || strings.Contains(listJSON, form) {
						t.Errorf("%s: the key page, key list or their JSON of sensitive key %q shows its value %q", where, key, v)
					}
				}
			}
		} else if d.Find(`[data-testid="value-withheld"]`).Length() != 0 {
			t.Errorf("%s: a key of a family not sensitive has its value withheld", where)
		}
		if decode.Supported(schema.Role(role)) && !fam.Sensitive {
			panel := d.Find(`[data-testid="key-decoded"]`)
			if panel.Length() != 1 {
				t.Errorf("%s: role %s has a decoder, the page no decoded panel", where, role)
			} else if s := panel.Text(); strings.Contains(s, "the key is gone") {
				continue // expired between the page's reads (the demo's traffic): the next one
			} else if strings.Contains(s, "Could not be decoded") || strings.Contains(s, "Not decoded") {
				t.Errorf("%s: %s: %s", where, key, strings.Join(strings.Fields(s), " "))
			} else {
				crawled.decoded++
			}
		}
		return true
	}
	return false
}

func crawlKeyOf(t *testing.T, href string) string {
	t.Helper()
	_, q, _ := strings.Cut(href, "?")
	vals, err := url.ParseQuery(q)
	if err != nil {
		t.Fatal(err)
	}
	return vals.Get("k")
}

// crawlValues reads a small key's value bytes straight from the demo.
func crawlValues(t *testing.T, c redis.UniversalClient, key string) []string {
	t.Helper()
	ctx := context.Background()
	typ, err := c.Type(ctx, key).Result()
	if err != nil {
		t.Fatal(err)
	}
	switch typ {
	case "string":
		v, _ := c.Get(ctx, key).Result()
		return []string{v}
	case "hash":
		m, _ := c.HGetAll(ctx, key).Result()
		var out []string
		for _, v := range m {
			out = append(out, v)
		}
		return out
	case "set":
		v, _ := c.SMembers(ctx, key).Result()
		return v
	case "list":
		v, _ := c.LRange(ctx, key, 0, 100).Result()
		return v
	case "zset":
		v, _ := c.ZRange(ctx, key, 0, 100).Result()
		return v
	}
	return nil
}

// familyKeysNow scans the server (every primary of a cluster) for the
// keys of fam in db.
// stillThere: the names in both reads.
func stillThere(before, after []string) []string {
	var both []string
	for _, k := range after {
		if slices.Contains(before, k) {
			both = append(both, k)
		}
	}
	return both
}

func familyKeysNow(t *testing.T, dbc redis.UniversalClient, cls *schema.Classifier, db int, fam *schema.Family) []string {
	t.Helper()
	ctx := context.Background()
	var mu sync.Mutex
	var out []string
	scan := func(ctx context.Context, c *redis.Client) error {
		iter := c.Scan(ctx, 0, "*", 1000).Iterator()
		for iter.Next(ctx) {
			if f, _ := cls.Classify(db, iter.Val()); f == fam {
				mu.Lock()
				out = append(out, iter.Val())
				mu.Unlock()
			}
		}
		return iter.Err()
	}
	var err error
	switch c := dbc.(type) {
	case *redis.ClusterClient:
		err = c.ForEachMaster(ctx, scan)
	case *redis.Client:
		err = scan(ctx, c)
	default:
		t.Fatalf("familyKeysNow: %T", dbc)
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// crawlDirect connects straight to a connection's server: the databases
// holding keys and a client of each (a cluster: database 0, every node).
func crawlDirect(t *testing.T, raw string) ([]int, func(db int) redis.UniversalClient) {
	t.Helper()
	ctx := context.Background()
	opt, err := redis.ParseURL(raw)
	if err != nil {
		t.Fatal(err)
	}
	direct := redis.NewClient(opt)
	t.Cleanup(func() { direct.Close() })
	if txt, err := direct.Info(ctx, "cluster").Result(); err == nil && strings.Contains(txt, "cluster_enabled:1") {
		cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{opt.Addr}})
		t.Cleanup(func() { cc.Close() })
		return []int{0}, func(int) redis.UniversalClient { return cc }
	}
	info, err := direct.Info(ctx, "keyspace").Result()
	if err != nil {
		t.Fatal(err)
	}
	var dbs []int
	for db, ks := range stats.ParseInfo(info).Keyspace() {
		if ks.Keys > 0 {
			dbs = append(dbs, db)
		}
	}
	if len(dbs) == 0 {
		t.Fatalf("%s: no keys", raw)
	}
	slices.Sort(dbs)
	return dbs, func(db int) redis.UniversalClient {
		o := *opt
		o.DB = db
		c := redis.NewClient(&o)
		t.Cleanup(func() { c.Close() })
		return c
	}
}
