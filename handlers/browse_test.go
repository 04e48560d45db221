package handlers_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/gorilla/websocket"

	"github.com/keydeck/keydeck/internal/route"
)

const bucketFamily = "slider-rate-create-account"

func bucketKey(user string) string {
	return "verify:slider:rate:create:account:" + base64.RawURLEncoding.EncodeToString([]byte(user))
}

// linkedKey is the key a key-page link names, byte for byte.
func linkedKey(t *testing.T, href string) string {
	t.Helper()
	u, err := url.Parse(href)
	if err != nil || u.Path != "/c/main/db/4/key" && u.Path != "/c/main/db/5/key" {
		t.Fatalf("key link %q", href)
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		t.Fatalf("key link %q: %v", href, err)
	}
	return q.Get("k")
}

// The database page links each family row to its key list and each
// unmatched-prefix row to the list of that prefix, with the prefix's bytes
// exactly; the lists hold what the rows count.
func TestDatabasePageLinksToKeyLists(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	ctx := context.Background()
	db := f.redis.Client(4)
	db.HSet(ctx, bucketKey("ada"), "tokens", "3", "ts", strconv.FormatInt(time.Now().UnixMilli(), 10))
	odd := []string{"\xff<i>:x:1", "\xff<i>:x:2"}
	for _, k := range odd {
		db.Set(ctx, k, "v", 0)
	}
	br := newBrowser(t, f.srv.URL)
	br.login("vera", "right-password")
	var doc *goquery.Document
	waitFor(t, "the sweep lists the family and the prefix", func() bool {
		code, _, body := br.do(http.MethodGet, route.DatabaseURL("main", 4), nil)
		if code != http.StatusOK {
			t.Fatalf("db page: %d", code)
		}
		doc = valueDoc(t, body)
		return doc.Find(`[data-testid="family-link"]`).Length() > 0 && doc.Find(`[data-testid="prefix-link"]`).Length() > 0
	})
	famHref, _ := doc.Find(`[data-testid="family-` + bucketFamily + `"] [data-testid="family-link"]`).Attr("href")
	if famHref != route.FamilyKeysURL("main", 4, bucketFamily) {
		t.Fatalf("family link %q", famHref)
	}
	prefHref, _ := doc.Find(`[data-testid="prefix-link"]`).First().Attr("href")
	if prefHref != route.PrefixKeysURL("main", 4, "\xff<i>:x:") {
		t.Fatalf("prefix link %q, want %q", prefHref, route.PrefixKeysURL("main", 4, "\xff<i>:x:"))
	}
	_, _, body := br.do(http.MethodGet, famHref, nil)
	if got := listedKeys(t, valueDoc(t, body)); !slices.Equal(got, []string{bucketKey("ada")}) {
		t.Fatalf("family list %q", got)
	}
	_, _, body = br.do(http.MethodGet, prefHref, nil)
	got := listedKeys(t, valueDoc(t, body))
	slices.Sort(got)
	if !slices.Equal(got, odd) {
		t.Fatalf("prefix list %q, want %q", got, odd)
	}
}

func listedKeys(t *testing.T, doc *goquery.Document) []string {
	t.Helper()
	var out []string
	doc.Find(`[data-testid="key-row"] a[data-testid="key-link"]`).Each(func(_ int, s *goquery.Selection) {
		href, _ := s.Attr("href")
		out = append(out, linkedKey(t, href))
	})
	return out
}

// Following "Next page" from the first page reaches every key of the
// family exactly once, among thousands of other keys; each row shows the
// decoded placeholder and the bucket's summary, and the last page says it
// is the end of the database.
func TestKeyListPagesReachEveryKeyOnce(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	ctx := context.Background()
	db := f.redis.Client(4)
	p := db.Pipeline()
	for i := range 3000 {
		p.Set(ctx, fmt.Sprintf("fill:%d", i), "x", 0)
	}
	want := map[string]string{}
	now := strconv.FormatInt(time.Now().UnixMilli(), 10)
	for i := range 130 {
		u := fmt.Sprintf("user%d", i)
		want[bucketKey(u)] = u
		p.HSet(ctx, bucketKey(u), "tokens", "5", "ts", now)
		p.Expire(ctx, bucketKey(u), time.Hour)
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	br := newBrowser(t, f.srv.URL)
	br.login("vera", "right-password")
	seen := map[string]int{}
	next, pages, state := route.FamilyKeysURL("main", 4, bucketFamily), 0, ""
	for next != "" {
		if pages++; pages > 200 {
			t.Fatal("the pages never end")
		}
		code, _, body := br.do(http.MethodGet, next, nil)
		if code != http.StatusOK {
			t.Fatalf("GET %s: %d %.300s", next, code, body)
		}
		doc := valueDoc(t, body)
		if title := doc.Find("title").Text(); !strings.Contains(title, "db4 · family "+bucketFamily) {
			t.Fatalf("title %q", title)
		}
		rows := doc.Find(`[data-testid="key-row"]`)
		if rows.Length() > 50 {
			t.Fatalf("a page of %d rows", rows.Length())
		}
		if prog := doc.Find(`[data-testid="progress"]`).Text(); !strings.Contains(prog, fmt.Sprintf(", %d of this family on this page", rows.Length())) {
			t.Fatalf("progress %q for %d rows", prog, rows.Length())
		}
		rows.Each(func(_ int, r *goquery.Selection) {
			href, _ := r.Find(`a[data-testid="key-link"]`).Attr("href")
			k := linkedKey(t, href)
			seen[k]++
			if v := strings.TrimSpace(r.Find(`[data-testid="key-var"]`).Text()); !strings.HasPrefix(v, want[k]) {
				t.Fatalf("%s: placeholder %q, want %q", k, v, want[k])
			}
			if s := r.Find(`[data-testid="key-summary"]`).Text(); s != "5 of 12 tokens now" && !strings.HasSuffix(s, "of 12 tokens now") {
				t.Fatalf("%s: summary %q", k, s)
			}
			if ttl := r.Find(`[data-testid="key-ttl"]`).Text(); !strings.Contains(ttl, "m") || r.Find(`[data-testid="key-size"]`).Text() != "2 fields" {
				t.Fatalf("%s: TTL %q size %q", k, ttl, r.Find(`[data-testid="key-size"]`).Text())
			}
		})
		state, _ = doc.Find(`[data-testid="state"]`).Attr("data-state")
		next, _ = doc.Find(`[data-testid="next-page"]`).Attr("href")
		if (next == "") != (state == "end") {
			t.Fatalf("state %q with next %q", state, next)
		}
	}
	if len(seen) != len(want) {
		t.Fatalf("reached %d of %d keys in %d pages", len(seen), len(want), pages)
	}
	for k, n := range seen {
		if n != 1 || want[k] == "" {
			t.Fatalf("%q listed %d times (of the family: %v)", k, n, want[k] != "")
		}
	}
	t.Logf("%d keys in %d pages", len(seen), pages)
}

// A sensitive family's list shows names, types and TTLs, never a value or
// a summary: the summary column says "withheld", in HTML and JSON.
func TestKeyListOfSensitiveFamilyShowsNoValue(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	ctx := context.Background()
	const seed = "JBSWY3DPEHPK3PXPSECRETSEED"
	f.redis.Client(5).Set(ctx, "totp:security:secret:plain:alice", seed, time.Hour)
	br := newBrowser(t, f.srv.URL)
	br.login("ada", "right-password")
	u := route.FamilyKeysURL("main", 5, "totp-secret-plain")
	code, _, body := br.do(http.MethodGet, u, nil)
	if code != http.StatusOK || strings.Contains(body, seed) {
		t.Fatalf("GET %s: %d, shows the secret: %v", u, code, strings.Contains(body, seed))
	}
	doc := valueDoc(t, body)
	if got := listedKeys(t, doc); !slices.Equal(got, []string{"totp:security:secret:plain:alice"}) {
		t.Fatalf("listed %q", got)
	}
	if s := doc.Find(`[data-testid="key-summary"]`).Text(); s != "withheld" {
		t.Fatalf("summary %q", s)
	}
	code, _, body = br.do(http.MethodGet, u, nil, "Accept", "application/json")
	// The JSON is list-keys': the list says the family is sensitive, and
	// its rows carry names, types and TTLs — no value, no summary.
	var vm struct {
		List struct{ Sensitive bool }
		Keys struct {
			Items []map[string]json.RawMessage
		}
	}
	if err := json.Unmarshal([]byte(body), &vm); err != nil || code != http.StatusOK {
		t.Fatalf("JSON: %d %v", code, err)
	}
	if strings.Contains(body, seed) || !vm.List.Sensitive || len(vm.Keys.Items) != 1 || string(vm.Keys.Items[0]["key"]) != `"totp:security:secret:plain:alice"` {
		t.Fatalf("JSON %s", body)
	}
	for field := range vm.Keys.Items[0] {
		if !slices.Contains([]string{"key", "gone", "type", "ttl_ms", "size", "subject"}, field) {
			t.Errorf("a sensitive key's row carries %q: %s", field, body)
		}
	}
}

// Hostile key names are escaped where shown and linked byte-exact; a name
// too long to link is shown cut and unlinked.
func TestKeyListHostileNames(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	ctx := context.Background()
	db := f.redis.Client(4)
	hostile := []string{"zz:<script>alert(1)</script>", "zz:\xff\xfe\x00bin", "zz:a&b=c%20d+e#f?g", "zz:\u202eevil"}
	long := "zz:" + strings.Repeat("é", 5000)
	for _, k := range append(slices.Clone(hostile), long) {
		db.Set(ctx, k, "v", 0)
	}
	db.HSet(ctx, "zz:"+bucketKey("x")[3:], "tokens", 1) // another prefix's family key would not match "zz:" anyway
	br := newBrowser(t, f.srv.URL)
	br.login("vera", "right-password")
	code, _, body := br.do(http.MethodGet, route.PrefixKeysURL("main", 4, "zz:"), nil)
	if code != http.StatusOK {
		t.Fatalf("%d %.300s", code, body)
	}
	if strings.Contains(body, "<script>alert") || strings.Contains(body, "\u202e") || strings.Contains(body, "\xff") {
		t.Fatal("a hostile name is in the page unescaped")
	}
	doc := valueDoc(t, body)
	got := listedKeys(t, doc)
	slices.Sort(got)
	want := slices.Clone(hostile)
	want = append(want, "zz:"+bucketKey("x")[3:])
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("linked %q, want %q", got, want)
	}
	if n := doc.Find(`[data-testid="key-row"] [data-testid="name-unlinked"]`).Length(); n != 1 {
		t.Fatalf("%d unlinked names, want the long one", n)
	}
	if doc.Find(`[data-testid="key-row"]`).Length() != len(want)+1 {
		t.Fatalf("%d rows", doc.Find(`[data-testid="key-row"]`).Length())
	}
	// Every link opens its key.
	for _, k := range hostile {
		if code, _, _ := br.do(http.MethodGet, route.KeyURL("main", 4, k), nil); code != http.StatusOK {
			t.Fatalf("key page of %q: %d", k, code)
		}
	}
}

// Lists that cannot be: an unknown family (or one of another database) is
// 404, malformed parameters 400, in HTML and JSON alike.
func TestKeyListErrors(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	br := newBrowser(t, f.srv.URL)
	br.login("vera", "right-password")
	for _, tc := range []struct {
		url  string
		code int
	}{
		{route.FamilyKeysURL("main", 4, "no-such-family"), http.StatusNotFound},
		{route.FamilyKeysURL("main", 3, bucketFamily), http.StatusNotFound},
		{route.FamilyKeysURL("nope", 4, bucketFamily), http.StatusNotFound},
		{route.KeysPath("main", 4), http.StatusBadRequest},
		{route.FamilyKeysURL("main", 4, bucketFamily) + "&prefix=x", http.StatusBadRequest},
		{route.FamilyKeysURL("main", 4, bucketFamily) + "&at=zzz", http.StatusBadRequest},
		{route.FamilyKeysURL("main", 4, bucketFamily) + "&at=12.3", http.StatusOK},
		// A cluster's position on a single server (an old link): a bad
		// position, not a Redis failure.
		{route.FamilyKeysURL("main", 4, bucketFamily) + "&at=s0:12", http.StatusBadRequest},
		{route.PrefixKeysURL("main", 4, ""), http.StatusOK},
	} {
		for _, accept := range []string{"text/html", "application/json"} {
			if code, _, body := br.do(http.MethodGet, tc.url, nil, "Accept", accept); code != tc.code {
				t.Errorf("GET %s (%s): %d, want %d: %.200s", tc.url, accept, code, tc.code, body)
			}
		}
	}
	_, _, body := br.do(http.MethodGet, route.FamilyKeysURL("main", 4, bucketFamily), nil)
	if e := valueDoc(t, body).Find(`[data-testid="empty"]`).Text(); e != "No key of this family in db4." {
		t.Fatalf("empty state %q", e)
	}
}

// The live list re-reads the page's keys each tick, with no new SCAN: a
// TTL counts down, a deleted key turns "gone", a key created after the walk
// does not appear.
func TestKeyListLive(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	ctx := context.Background()
	db := f.redis.Client(4)
	now := strconv.FormatInt(time.Now().UnixMilli(), 10)
	for _, u := range []string{"ann", "bob"} {
		db.HSet(ctx, bucketKey(u), "tokens", "5", "ts", now)
		db.Expire(ctx, bucketKey(u), time.Hour)
	}
	_, _, page := get(t, f.srv.URL+route.FamilyKeysURL("main", 4, bucketFamily))
	wsURL, ok := valueDoc(t, page).Find(`[ws-connect]`).Attr("ws-connect")
	if !ok {
		t.Fatal("no live part on the page")
	}
	ws, res, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(f.srv.URL, "http")+wsURL, http.Header{"Origin": {f.srv.URL}})
	if err != nil {
		t.Fatalf("dial %s: %v (%+v)", wsURL, err, res)
	}
	defer ws.Close()
	read := func() *goquery.Document {
		_ = ws.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, msg, err := ws.ReadMessage()
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		return valueDoc(t, string(msg))
	}
	first := read()
	if got := listedKeys(t, first); len(got) != 2 {
		t.Fatalf("first frame lists %q", got)
	}
	calls, err := f.redis.CommandCalls(ctx)
	if err != nil {
		t.Fatal(err)
	}
	scans := calls["scan"]
	db.Del(ctx, bucketKey("bob"))
	db.HSet(ctx, bucketKey("cy"), "tokens", "5", "ts", now)
	db.Expire(ctx, bucketKey("ann"), time.Minute)
	deadline := time.Now().Add(5 * time.Second)
	for {
		if time.Now().After(deadline) {
			t.Fatal("no frame with bob gone and ann's TTL down to a minute")
		}
		doc := read()
		if got := listedKeys(t, doc); len(got) != 2 || slices.Contains(got, bucketKey("cy")) {
			t.Fatalf("a live frame lists %q: the key set changed", got)
		}
		gone := doc.Find(`[data-testid="key-gone"]`).Length()
		ttl := doc.Find(`[data-testid="key-ttl"]`).First().Text()
		if short := !strings.Contains(ttl, "m") || ttl == "1m"; gone == 1 && short {
			break
		}
	}
	calls, _ = f.redis.CommandCalls(ctx)
	if calls["scan"] != scans {
		t.Fatalf("%d SCAN calls while the list was live", calls["scan"]-scans)
	}
}

// With Redis down the list says so and claims nothing about the keys; the
// live part is not there to pretend otherwise. Back up, it lists again.
func TestKeyListDisconnected(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	f.redis.Client(4).HSet(context.Background(), bucketKey("ada"), "tokens", "1", "ts", "1")
	u := f.srv.URL + route.FamilyKeysURL("main", 4, bucketFamily)
	f.redis.Stop()
	waitFor(t, "monitor sees redis down", func() bool { return !f.reg.All()[0].Status().Up })
	code, _, body := get(t, u)
	doc := valueDoc(t, body)
	if msg := doc.Find(`[data-testid="disconnected"]`).Text(); code != http.StatusOK || !strings.Contains(msg, "disconnected since") || !strings.Contains(msg, "no key was read") {
		t.Fatalf("while down: %d %q", code, msg)
	}
	if doc.Find(`[data-testid="key-row"]`).Length() != 0 || doc.Find(`[data-testid="empty"]`).Length() != 0 || doc.Find(`[data-testid="state"]`).Length() != 0 {
		t.Fatal("the page claims something about keys it could not read")
	}
	f.redis.Restart()
	waitFor(t, "monitor sees redis back", func() bool { return f.reg.All()[0].Status().Up })
	f.redis.Client(4).HSet(context.Background(), bucketKey("ada"), "tokens", "1", "ts", "1") // a restart may lose it
	if _, _, body := get(t, u); valueDoc(t, body).Find(`[data-testid="key-row"]`).Length() != 1 {
		t.Fatal("no row once Redis is back")
	}
}
