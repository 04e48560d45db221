package handlers_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/keydeck/keydeck/handlers"
	"github.com/keydeck/keydeck/internal/demo"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/internal/server"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/search"
)

func doc(t *testing.T, body string) *goquery.Document {
	t.Helper()
	d, err := goquery.NewDocumentFromReader(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// An account name finds its slider keys (derived, linked to their key
// pages); a sensitive family's key is listed but its value never read.
func TestSearchPageFindsAccountKeys(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	ctx := context.Background()
	acct := "Zoë:ops/β"
	enc := demo.SliderKeyPart(acct)
	f.redis.Client(4).Set(ctx, "verify:slider:fail:account:"+enc, "2", 10*time.Minute)
	f.redis.Client(4).HSet(ctx, "verify:slider:rate:create:account:"+enc, "tokens", "3", "ts", "1")
	const seed = "JBSWY3DPEHPK3PXPSECRET"
	f.redis.Client(5).Set(ctx, "totp:security:secret:plain:"+acct, seed, time.Minute)
	code, _, body := get(t, f.srv.URL+route.SearchURL("main", acct))
	if code != http.StatusOK {
		t.Fatalf("status %d: %.300s", code, body)
	}
	if strings.Contains(body, seed) {
		t.Fatal("the page shows a sensitive value")
	}
	d := doc(t, body)
	hits := map[string]string{}
	d.Find(`[data-testid="search-hit"]`).Each(func(_ int, s *goquery.Selection) {
		a := s.Find(`a[data-testid="search-key"]`)
		href, _ := a.Attr("href")
		hits[href] = strings.TrimSpace(s.Find(`[data-testid="search-how"]`).Text())
	})
	for _, k := range []struct {
		db  int
		key string
	}{{4, "verify:slider:fail:account:" + enc}, {4, "verify:slider:rate:create:account:" + enc}, {5, "totp:security:secret:plain:" + acct}} {
		if how := hits[route.KeyURL("main", k.db, k.key)]; how != "derived" {
			t.Errorf("%s: found by %q; hits %v", k.key, how, hits)
		}
	}
	if d.Find(`[data-testid="search-db-4"] [data-testid="search-family-slider-fail-account"]`).Length() != 1 {
		t.Error("no slider-fail-account group in db4")
	}
	if s := d.Find(`[data-testid="search-family-totp-secret-plain"]`).Text(); !strings.Contains(s, "sensitive") {
		t.Errorf("sensitive family not marked: %q", s)
	}
	// The same as JSON, for support tooling.
	code, _, jb := get(t, f.srv.URL+route.SearchURL("main", acct), "Accept", "application/json")
	// The JSON is the search operation's: hits by database and family.
	var vm struct {
		Query struct{ Kind string }
		Hits  struct {
			Items []struct {
				DB     int `json:"db"`
				Key    json.RawMessage
				Family string
				How    string
			}
		}
	}
	if err := json.Unmarshal([]byte(jb), &vm); err != nil || code != http.StatusOK {
		t.Fatalf("JSON %d %v %.300s", code, err, jb)
	}
	derived := map[string]int{}
	for _, h := range vm.Hits.Items {
		if h.How == "derived" {
			derived[jsonName(t, h.Key)] = h.DB
		}
	}
	if vm.Query.Kind != "value" || len(derived) != 3 || derived["verify:slider:fail:account:"+enc] != 4 || derived["totp:security:secret:plain:"+acct] != 5 {
		t.Errorf("JSON %+v", vm)
	}
	if strings.Contains(jb, seed) {
		t.Fatal("the JSON shows a sensitive value")
	}
}

// The header box is on every page of a connection, and on pages of none.
func TestSearchBoxInHeader(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	for _, p := range []string{"/", "/c/main", "/c/main/db/3", route.SearchPath("main")} {
		_, _, body := get(t, f.srv.URL+p)
		form := doc(t, body).Find(`header form[data-testid="header-search"]`)
		if action, _ := form.Attr("action"); action != "/c/main/search" || form.Find(`input[name="q"]`).Length() != 1 {
			t.Errorf("%s: header search form action %q", p, action)
		}
		if form.Find("select").Length() != 0 {
			t.Errorf("%s: a choice of connection with only one", p)
		}
	}
	// Two connections: the home page's box chooses one, and the search
	// redirects to the chosen one.
	rs := redistest.Start(t)
	two := startConsole(t, rs, server.Config{Conns: []redisview.ConnConfig{{Name: "one", URL: rs.URL(0)}, {Name: "two", URL: rs.URL(1)}}}, nil).up(t)
	_, _, body := get(t, two.srv.URL+"/")
	var opts []string
	doc(t, body).Find(`header form[data-testid="header-search"] select[name="conn"] option`).Each(func(_ int, s *goquery.Selection) {
		v, _ := s.Attr("value")
		opts = append(opts, v)
	})
	if strings.Join(opts, ",") != "one,two" {
		t.Fatalf("connection choice %v", opts)
	}
	b := newBrowser(t, two.srv.URL)
	code, hdr, _ := b.do(http.MethodGet, "/c/one/search?conn=two&q="+url.QueryEscape("a b&c"), nil)
	if code != http.StatusSeeOther || hdr.Get("Location") != route.SearchURL("two", "a b&c") {
		t.Fatalf("redirect %d %q", code, hdr.Get("Location"))
	}
	if code, _, _ := b.do(http.MethodGet, "/c/one/search?conn=nope&q=x", nil); code != http.StatusNotFound {
		t.Fatalf("unknown chosen connection: %d", code)
	}
}

func TestSearchErrors(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	for _, tc := range []struct {
		path   string
		status int
		has    string
	}{
		{route.SearchPath("main"), http.StatusOK, `data-testid="search-help"`},
		{route.SearchURL("main", "   "), http.StatusOK, `data-testid="search-help"`},
		{route.SearchURL("main", strings.Repeat("a", search.MaxQuery+1)), http.StatusBadRequest, "at most 1,024 bytes"},
		{route.SearchURL("main", strings.Repeat("a", search.MaxQuery)), http.StatusOK, `data-testid="search-reading"`},
		{route.SearchURL("main", "x") + "&cont=garbage", http.StatusBadRequest, "malformed continue cursors"},
		{"/c/nope/search?q=x", http.StatusNotFound, "No such connection"},
		{route.SearchURL("main", "slider-fail-account"), http.StatusOK, `data-testid="family-list"`},
	} {
		code, _, body := get(t, f.srv.URL+tc.path)
		if code != tc.status || !strings.Contains(body, tc.has) {
			t.Errorf("%.80s: %d, want %d with %q; %.300s", tc.path, code, tc.status, tc.has, body)
		}
	}
	// A family id links to its key lists in each of its databases.
	_, _, body := get(t, f.srv.URL+route.SearchURL("main", "slider-fail-account"))
	href, _ := doc(t, body).Find(`[data-testid="family-list"]`).Attr("href")
	if href != route.FamilyKeysURL("main", 4, "slider-fail-account") {
		t.Errorf("family list link %q", href)
	}
	// Redis down: the page says so, with no claim about keys.
	f.redis.Stop()
	waitFor(t, "monitor sees redis down", func() bool { return !f.reg.All()[0].Status().Up })
	code, _, body := get(t, f.srv.URL+route.SearchURL("main", "alice"))
	if code != http.StatusBadGateway || !strings.Contains(body, "disconnected since") || strings.Contains(body, `data-testid="search-none"`) {
		t.Errorf("down: %d %.400s", code, body)
	}
}

// Hostile names, in keys and in the query, are shown escaped and carried
// byte-exact; a glob search stops at its cap and links a continuation.
func TestSearchHostileNamesAndCap(t *testing.T) {
	f := newFixture(t, false)
	ctx := context.Background()
	hostile := "hostile:<script>alert(1)</script>\xff\"'"
	f.redis.Client(0).Set(ctx, hostile, "v", 0)
	code, _, body := get(t, f.srv.URL+continued(t, f, route.SearchURL("main", "hostile:*")))
	if code != http.StatusOK || strings.Contains(body, "<script>alert") {
		t.Fatalf("%d; raw markup: %v", code, strings.Contains(body, "<script>alert"))
	}
	href, _ := doc(t, body).Find(`a[data-testid="search-key"]`).Attr("href")
	if href != route.KeyURL("main", 0, hostile) {
		t.Errorf("key link %q", href)
	}
	q := `"><script>alert(2)</script>`
	code, _, body = get(t, f.srv.URL+route.SearchURL("main", q))
	if code != http.StatusOK || strings.Contains(body, "<script>alert(2)") {
		t.Fatalf("hostile query reflected: %d", code)
	}
	if v, _ := doc(t, body).Find(`[data-testid="search-input"]`).Attr("value"); v != q {
		t.Errorf("query not kept in the form: %q", v)
	}

	defer handlers.SetSearchLimits(search.Limits{Calls: 50, Count: 20, Cap: 50, Time: 5 * time.Second})()
	p := f.redis.Client(7).Pipeline()
	for i := range 400 {
		p.Set(ctx, "bulk:"+strings.Repeat("x", i%7)+string(rune('a'+i%26))+":"+time.Duration(i).String(), i, 0)
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	// The page's first answer scans nothing (its live topic does); its
	// continue link, for a browser without JavaScript, runs the bounded
	// request.
	_, _, body = get(t, f.srv.URL+route.SearchURL("main", "bulk:*"))
	first, ok := doc(t, body).Find(`[data-testid="search-continue"]`).Attr("href")
	if !ok || !strings.Contains(first, "cont=") || !strings.Contains(body, `ws-connect="/ws?topic=search`) {
		t.Fatalf("first page: continue link %q; live %v", first, strings.Contains(body, "ws-connect"))
	}
	_, _, body = get(t, f.srv.URL+first)
	d := doc(t, body)
	notes := d.Find(`[data-testid="search-note"]`).Text()
	if !strings.Contains(notes, "Stopped at the cap of 50 keys") {
		t.Fatalf("no cap note: %q", notes)
	}
	if s := d.Find(`[data-testid="search-scan"]`).Text(); !strings.Contains(s, "stopped after scanning about") || !strings.Contains(s, "of ~400 keys") {
		t.Errorf("scan progress %q", s)
	}
	next, ok := d.Find(`[data-testid="search-continue"]`).Attr("href")
	if !ok || !strings.Contains(next, "cont=7.0%3A") {
		t.Fatalf("continue link %q", next)
	}
	_, _, body = get(t, f.srv.URL+next)
	if n := doc(t, body).Find(`[data-testid="search-hit"]`).Length(); n == 0 {
		t.Error("the continuation found nothing")
	}
}

// continued is the continue link of a search page's first answer: without
// JavaScript, the request that runs the scans.
func continued(t *testing.T, f *console, path string) string {
	t.Helper()
	_, _, body := get(t, f.srv.URL+path)
	href, ok := doc(t, body).Find(`[data-testid="search-continue"]`).Attr("href")
	if !ok {
		t.Fatalf("%s: no continue link", path)
	}
	return href
}
