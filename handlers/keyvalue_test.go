package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/route"
)

func valueDoc(t *testing.T, body string) *goquery.Document {
	t.Helper()
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// The key page shows a bounded page of the value, escaped; its paging links
// carry the cursor and the filter byte for byte; a sensitive key's value is
// withheld in HTML and in JSON.
func TestKeyPageShowsValue(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	ctx := context.Background()
	db := f.redis.Client(0)
	for i := range 150 {
		db.ZAdd(ctx, "board", redis.Z{Score: float64(i), Member: fmt.Sprintf("<b>p%03d</b>", i)})
	}
	db.HSet(ctx, "h\xff", "<script>x</script>", "v\x01\xfe", "big", strings.Repeat("y", 5000), "a*b", "1", "axb", "2")
	db.Set(ctx, "js", `{"a":[1,2],"b":"<i>"}`, 0)
	db.Set(ctx, "bin", "\x00\x01\xffPNG", 0)
	f.redis.Client(5).Set(ctx, "totp:security:secret:plain:ada", "JBSWY3DPEHPK3PXP", 0)
	br := newBrowser(t, f.srv.URL)
	br.login("ada", "right-password")

	code, _, body := br.do(http.MethodGet, route.KeyURL("main", 0, "board"), nil)
	if code != http.StatusOK {
		t.Fatalf("zset page: %d", code)
	}
	doc := valueDoc(t, body)
	rows := doc.Find(`[data-testid="value-row"]`)
	if rows.Length() != 100 || strings.TrimSpace(rows.First().Find("td").Eq(1).Text()) != "<b>p000</b>" || strings.Contains(body, "<b>p000") {
		t.Fatalf("zset first page: %d rows, first %q", rows.Length(), rows.First().Text())
	}
	next, _ := doc.Find(`[data-testid="value-next"]`).Attr("href")
	if code, _, body = br.do(http.MethodGet, next, nil); code != http.StatusOK {
		t.Fatalf("next page %s: %d", next, code)
	}
	doc = valueDoc(t, body)
	if rows := doc.Find(`[data-testid="value-row"]`); rows.Length() != 50 || strings.TrimSpace(rows.First().Find("td").First().Text()) != "100" || doc.Find(`[data-testid="value-next"]`).Length() != 0 {
		t.Fatalf("zset second page: %d rows, first %q", rows.Length(), rows.First().Text())
	}

	// The jump box sends k and at as a browser submits a GET form.
	form := doc.Find(`form[data-testid="value-jump"]`)
	action, _ := form.Attr("action")
	k, _ := form.Find(`input[name="k"]`).Attr("value")
	_, _, body = br.do(http.MethodGet, action+"?"+url.Values{"k": {k}, "at": {"140"}}.Encode(), nil)
	if rows := valueDoc(t, body).Find(`[data-testid="value-row"]`); rows.Length() != 10 || strings.TrimSpace(rows.First().Find("td").First().Text()) != "140" {
		t.Fatalf("jump to offset 140: %d rows, first %q", rows.Length(), rows.First().Text())
	}

	// A hash whose name is not UTF-8: values escaped, a big one cut with its length.
	code, _, body = br.do(http.MethodGet, route.KeyURL("main", 0, "h\xff"), nil)
	doc = valueDoc(t, body)
	text := doc.Find(`[data-testid="value-rows"]`).Text()
	if code != http.StatusOK || !strings.Contains(text, "<script>x</script>") || !strings.Contains(text, `v\x01\xfe`) || !strings.Contains(text, "320 of 5,000 bytes shown") || strings.Contains(body, "<script>x") {
		t.Fatalf("hash page: %d %q", code, text)
	}
	if doc.Find(`[data-testid="value-filter"]`).Length() != 0 {
		t.Fatal("a filter form for a key a form cannot carry (not UTF-8)")
	}
	// The filter matches itself, glob characters included.
	u := route.KeyValueURL("main", 0, "h\xff", route.Value{Filter: "a*b"})
	_, _, body = br.do(http.MethodGet, u, nil)
	if rows := valueDoc(t, body).Find(`[data-testid="value-row"]`); rows.Length() != 1 || strings.TrimSpace(rows.Find("td").First().Text()) != "a*b" {
		t.Fatalf("filtered hash: %d rows %q", rows.Length(), rows.Text())
	}

	_, _, body = br.do(http.MethodGet, route.KeyURL("main", 0, "js"), nil)
	if got := valueDoc(t, body).Find(`[data-testid="value-text"]`).Text(); got != "{\n  \"a\": [\n    1,\n    2\n  ],\n  \"b\": \"<i>\"\n}" {
		t.Fatalf("JSON string shown as %q", got)
	}
	_, _, body = br.do(http.MethodGet, route.KeyURL("main", 0, "bin"), nil)
	if got := valueDoc(t, body).Find(`[data-testid="value-text"]`).Text(); !strings.HasPrefix(got, "00000000  00 01 ff 50 4e 47") {
		t.Fatalf("binary string shown as %q", got)
	}

	code, _, body = br.do(http.MethodGet, route.KeyURL("main", 5, "totp:security:secret:plain:ada"), nil)
	if code != http.StatusOK || !strings.Contains(body, `data-testid="value-withheld"`) || strings.Contains(body, "JBSWY3DPEHPK3PXP") {
		t.Fatalf("sensitive page: %d, withheld note %v", code, strings.Contains(body, "value-withheld"))
	}
	code, _, body = br.do(http.MethodGet, route.KeyURL("main", 5, "totp:security:secret:plain:ada"), nil, "Accept", "application/json")
	if code != http.StatusOK || strings.Contains(body, "JBSWY3DPEHPK3PXP") || !strings.Contains(body, `"value":{"withheld":true`) {
		t.Fatalf("sensitive JSON: %d %.400s", code, body)
	}
	code, _, body = br.do(http.MethodGet, route.KeyURL("main", 0, "board"), nil, "Accept", "application/json")
	if code != http.StatusOK || !strings.Contains(body, `"name":"\u003cb\u003ep000\u003c/b\u003e"`) {
		t.Fatalf("zset JSON: %d %.600s", code, body)
	}
	for _, bad := range []string{"&at=x1", "&at=-1", "&view=raw"} {
		if code, _, _ := br.do(http.MethodGet, route.KeyURL("main", 0, "board")+bad, nil); code != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", bad, code)
		}
	}
}

// Score windows, member lookup, newest-first streams, scan trails and the
// length and encoding line, through the page; every malformed parameter is
// a 400 that says what is wrong.
func TestKeyPageWindowsAndErrors(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	ctx := context.Background()
	db := f.redis.Client(0)
	for i := range 300 {
		db.ZAdd(ctx, "board", redis.Z{Score: float64(i), Member: fmt.Sprintf("p%03d", i)})
		db.XAdd(ctx, &redis.XAddArgs{Stream: "events", ID: fmt.Sprintf("%d-0", i+1), Values: []string{"n", fmt.Sprint(i)}})
		db.SAdd(ctx, "tags", fmt.Sprintf("tag-%03d-%s", i, strings.Repeat("x", 70)))
	}
	br := newBrowser(t, f.srv.URL)
	br.login("ada", "right-password")
	get := func(v route.Value, key string) *goquery.Document {
		t.Helper()
		code, _, body := br.do(http.MethodGet, route.KeyValueURL("main", 0, key, v), nil)
		if code != http.StatusOK {
			t.Fatalf("%s %+v: %d %.300s", key, v, code, body)
		}
		return valueDoc(t, body)
	}
	first := func(d *goquery.Document, col int) string {
		return strings.TrimSpace(d.Find(`[data-testid="value-row"]`).First().Find("td").Eq(col).Text())
	}

	d := get(route.Value{Min: "(99.5", Max: "250"}, "board")
	if first(d, 1) != "p100" || first(d, 0) != "100" || !strings.Contains(d.Find(`[data-testid="value-window"]`).Text(), "151 members, ranks 100–250") {
		t.Fatalf("score window: first %q, note %q", first(d, 1), d.Find(`[data-testid="value-window"]`).Text())
	}
	next, _ := d.Find(`[data-testid="value-next"]`).Attr("href")
	if !strings.Contains(next, "min=%2899.5") || !strings.Contains(next, "max=250") {
		t.Fatalf("next keeps the window: %s", next)
	}
	if d := get(route.Value{Min: "(99.5", Max: "250", At: "100"}, "board"); first(d, 1) != "p200" || d.Find(`[data-testid="value-row"]`).Length() != 51 {
		t.Fatalf("window page 2: %q", first(d, 1))
	}
	if enc := get(route.Value{}, "board").Find(`[data-testid="value-encoding"]`).Text(); enc != "encoding: skiplist" {
		t.Fatalf("encoding line %q", enc)
	}

	d = get(route.Value{Member: "p234"}, "board")
	res := d.Find(`[data-testid="value-lookup-result"]`)
	href, _ := res.Find(`[data-testid="value-lookup-page"]`).Attr("href")
	if !strings.Contains(res.Text(), "score 234, rank 234") || href != route.KeyValueURL("main", 0, "board", route.Value{At: "200"}) {
		t.Fatalf("lookup: %q → %s", res.Text(), href)
	}
	lcode, _, lbody := br.do(http.MethodGet, route.KeyValueURL("main", 0, "board", route.Value{Member: "p234"}), nil, "Accept", "application/json")
	var lk struct {
		Value  struct{ Encoding string }
		Lookup *struct {
			Member string
			Found  bool
			Score  float64
			Rank   int64
			At     string
		}
	}
	if err := json.Unmarshal([]byte(lbody), &lk); lcode != http.StatusOK || err != nil || lk.Lookup == nil || !lk.Lookup.Found || lk.Lookup.Member != "p234" ||
		lk.Lookup.Score != 234 || lk.Lookup.Rank != 234 || lk.Lookup.At != "200" || lk.Value.Encoding != "skiplist" {
		t.Fatalf("lookup as JSON: %d %.300s", lcode, lbody)
	}
	if res := get(route.Value{Member: "<nobody>"}, "board").Find(`[data-testid="value-lookup-result"]`).Text(); !strings.Contains(res, "No member “<nobody>”") {
		t.Fatalf("lookup of a missing member: %q", res)
	}

	d = get(route.Value{Desc: true}, "events")
	if first(d, 0) != "300-0" {
		t.Fatalf("newest first: %q", first(d, 0))
	}
	next, _ = d.Find(`[data-testid="value-next"]`).Attr("href")
	code, _, body := br.do(http.MethodGet, next, nil)
	d = valueDoc(t, body)
	prev, _ := d.Find(`[data-testid="value-prev"]`).Attr("href")
	if code != http.StatusOK || first(d, 0) != "200-0" || prev != route.KeyValueURL("main", 0, "events", route.Value{Desc: true, At: "300-0"}) {
		t.Fatalf("newest first, page 2: %d %q prev %s", code, first(d, 0), prev)
	}
	if hidden, _ := d.Find(`form[data-testid="value-jump"] input[name="order"]`).Attr("value"); hidden != "desc" {
		t.Fatal("the jump form forgets newest first")
	}

	// A scan goes back along its trail.
	d = get(route.Value{}, "tags")
	firstTag := first(d, 0)
	next, _ = d.Find(`[data-testid="value-next"]`).Attr("href")
	_, _, body = br.do(http.MethodGet, next, nil)
	prev, _ = valueDoc(t, body).Find(`[data-testid="value-prev"]`).Attr("href")
	if !strings.Contains(next, "trail=0") || prev == "" {
		t.Fatalf("scan trail: next %s prev %q", next, prev)
	}
	_, _, body = br.do(http.MethodGet, prev, nil)
	if got := first(valueDoc(t, body), 0); got != firstTag {
		t.Fatalf("back along the trail: %q, want %q", got, firstTag)
	}

	for _, tc := range []struct{ key, query, want string }{
		{"board", "&min=abc", "is not a score"},
		{"board", "&min=5&max=4", "is above max"},
		{"board", "&min=nan", "is not a score"},
		{"board", "&at=-3", "is not an offset"},
		{"board", "&order=desc", "newest first is for streams"},
		{"board", "&trail=0", "scan trail is for hashes and sets"},
		{"events", "&at=12-x", "is not a page position"},
		{"events", "&at=((12", "not a stream entry ID"},
		{"events", "&order=sideways", "order is asc or desc"},
		{"events", "&m=x", "member lookup is for sorted sets"},
		{"events", "&min=1", "score window is for sorted sets"},
		{"tags", "&at=12-3", "not a scan position"},
		{"tags", "&trail=1,x", "trail is scan cursors"},
		{"tags", "&min=" + strings.Repeat("9", 65), "at most 64 characters"},
	} {
		code, _, body := br.do(http.MethodGet, route.KeyURL("main", 0, tc.key)+tc.query, nil)
		if code != http.StatusBadRequest || !strings.Contains(body, tc.want) {
			t.Errorf("%s%s: %d, want 400 saying %q; %.300s", tc.key, tc.query, code, tc.want, body)
		}
	}
}

// A long string pages in 64 KiB windows of text, 16 KiB of hex (with the
// dump's offsets counted from the window's start); the view travels with
// the links; a short string has no paging.
func TestKeyPageStringWindows(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	ctx := context.Background()
	long := strings.Repeat("0123456789", 20_000) // 200,000 bytes
	f.redis.Client(0).Set(ctx, "long", long, 0)
	f.redis.Client(0).Set(ctx, "short", "hi", 0)
	br := newBrowser(t, f.srv.URL)
	br.login("ada", "right-password")
	get := func(u string) *goquery.Document {
		t.Helper()
		code, _, body := br.do(http.MethodGet, u, nil)
		if code != http.StatusOK {
			t.Fatalf("%s: %d", u, code)
		}
		return valueDoc(t, body)
	}
	d := get(route.KeyURL("main", 0, "long"))
	next, _ := d.Find(`[data-testid="value-next"]`).Attr("href")
	last, _ := d.Find(`[data-testid="value-last"]`).Attr("href")
	if next != route.KeyValueURL("main", 0, "long", route.Value{At: "65536"}) || last != route.KeyValueURL("main", 0, "long", route.Value{At: "196608"}) ||
		d.Find(`[data-testid="value-prev"]`).Length() != 0 || d.Find(`[data-testid="value-jump"]`).Length() != 1 {
		t.Fatalf("first window: next %q last %q", next, last)
	}
	d = get(next)
	if note := d.Find(`[data-testid="value-note"]`).Text(); !strings.Contains(note, "Bytes 65,536–131,071 of") {
		t.Fatalf("second window note %q", note)
	}
	prev, _ := d.Find(`[data-testid="value-prev"]`).Attr("href")
	if prev != route.KeyValueURL("main", 0, "long", route.Value{At: "0"}) || d.Find(`[data-testid="value-text"]`).Text() != long[65536:131072] {
		t.Fatalf("second window: prev %q", prev)
	}
	d = get(route.KeyValueURL("main", 0, "long", route.Value{At: "32768", View: "hex"}))
	text := d.Find(`[data-testid="value-text"]`).Text()
	next, _ = d.Find(`[data-testid="value-next"]`).Attr("href")
	if !strings.HasPrefix(text, "00008000  ") || strings.Count(text, "\n") != 16<<10/16 || next != route.KeyValueURL("main", 0, "long", route.Value{At: "49152", View: "hex"}) {
		t.Fatalf("hex window: %.40q… next %q", text, next)
	}
	if hidden, _ := d.Find(`form[data-testid="value-jump"] input[name="view"]`).Attr("value"); hidden != "hex" {
		t.Fatal("the jump form forgets the hex view")
	}
	if d := get(route.KeyURL("main", 0, "short")); d.Find(`[data-testid="value-paging"]`).Length() != 0 {
		t.Fatal("paging for a two-byte string")
	}
	if code, _, body := br.do(http.MethodGet, route.KeyURL("main", 0, "long")+"&at=-5", nil); code != http.StatusBadRequest || !strings.Contains(body, "is not an offset") {
		t.Fatalf("negative byte offset: %d", code)
	}
}
