package handlers_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/internal/server"
	"github.com/keydeck/keydeck/redisview"
)

// The key page decodes a key by its pack role above the raw value: an
// empty slider bucket shows its tokens, capacity and that a request is
// refused; a login lock its unlock time. A sensitive key has no decoded
// panel and its value appears nowhere.
func TestKeyPageDecodesByRole(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	ctx := context.Background()
	bucket := "verify:slider:rate:create:account:" + base64.RawURLEncoding.EncodeToString([]byte("ada"))
	f.redis.Client(4).HSet(ctx, bucket, "tokens", "0", "ts", strconv.FormatInt(time.Now().UnixMilli(), 10))
	until := time.Now().Add(10 * time.Minute).UTC()
	f.redis.Client(6).Set(ctx, "auth:limit:login:lock:ada", strconv.FormatInt(until.UnixMilli(), 10), 10*time.Minute)
	f.redis.Client(5).Set(ctx, "totp:security:secret:plain:ada", "JBSWY3DPEHPK3PXP", 0)
	br := newBrowser(t, f.srv.URL)
	br.login("ada", "right-password")

	code, _, body := br.do(http.MethodGet, route.KeyURL("main", 4, bucket), nil)
	doc := valueDoc(t, body)
	panel := doc.Find(`[data-testid="key-decoded"]`)
	if code != http.StatusOK || panel.Length() != 1 {
		t.Fatalf("bucket page: %d, %d decoded panels", code, panel.Length())
	}
	if sum := strings.TrimSpace(panel.Find(`[data-testid="decoded-summary"]`).Text()); !strings.HasPrefix(sum, "0") || !strings.HasSuffix(sum, "of 12 tokens now") {
		t.Fatalf("bucket summary %q", sum)
	}
	if alert := panel.Find(`[data-testid="decoded-alert"]`).Text(); !strings.Contains(alert, "refused") {
		t.Fatalf("empty bucket alert %q", alert)
	}
	rows := panel.Find(`[data-testid="decoded-rows"]`).Text()
	for _, want := range []string{"Capacity", "12", "Last refill", "UTC", "Full in"} {
		if !strings.Contains(rows, want) {
			t.Fatalf("bucket rows lack %q: %q", want, rows)
		}
	}
	// Above the raw value.
	if html, _ := doc.Html(); strings.Index(html, `data-testid="key-value"`) < 0 || strings.Index(html, `data-testid="key-decoded"`) > strings.Index(html, `data-testid="key-value"`) {
		t.Fatal("the decoded panel is below the raw value")
	}

	_, _, body = br.do(http.MethodGet, route.KeyURL("main", 6, "auth:limit:login:lock:ada"), nil)
	if sum := valueDoc(t, body).Find(`[data-testid="decoded-summary"]`).Text(); !strings.Contains(sum, "Locked until "+until.Format("2006-01-02 15:04:05")+" UTC") {
		t.Fatalf("login lock summary %q", sum)
	}

	f.redis.Client(11).Set(ctx, "qweather:quota:provider:qweather:202612", "12500", 0)
	_, _, body = br.do(http.MethodGet, route.KeyURL("main", 11, "qweather:quota:provider:qweather:202612"), nil)
	if sum := valueDoc(t, body).Find(`[data-testid="decoded-summary"]`).Text(); !strings.Contains(sum, "12,500 / 50,000 calls this month (25.0%)") {
		t.Fatalf("quota summary %q", sum)
	}

	code, _, body = br.do(http.MethodGet, route.KeyURL("main", 5, "totp:security:secret:plain:ada"), nil)
	doc = valueDoc(t, body)
	if code != http.StatusOK || doc.Find(`[data-testid="decoded-withheld"]`).Length() != 1 || doc.Find(`[data-testid="decoded-summary"]`).Length() != 0 || strings.Contains(body, "JBSWY3DPEHPK3PXP") {
		t.Fatalf("sensitive key: %d, withheld panels %d", code, doc.Find(`[data-testid="decoded-withheld"]`).Length())
	}
}

// The gateway's reservation and concurrency roles on the key page: a
// member's link carries its reservation key byte-exact (not UTF-8, markup
// in it), a member without a reservation is flagged, a reservation without
// TTL alerts; the leaderboard links its live page and the bloom its exact
// set. JSON carries the same model, and a sensitive key's JSON no value.
func TestKeyPageDecodedLinks(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	f := startConsole(t, rs, server.Config{
		Conns:   []redisview.ConnConfig{{Name: "gw", URL: rs.URL(0)}, {Name: "ei", URL: rs.URL(0)}},
		PackFor: map[string]string{"gw": "gateway", "ei": "eisland"}}, nil).up(t)
	ctx := context.Background()
	g := rs.Client(0)
	odd := "req_\xff<i>&\"x\" y"
	g.Set(ctx, "q:reserved:"+odd, 2048, 5*time.Minute)
	g.SAdd(ctx, "q:conc:k1", odd, "req_crashed")
	g.Set(ctx, "q:reserved:req_forgot", 4096, 0)

	_, _, body := get(t, f.srv.URL+route.KeyURL("gw", 0, "q:conc:k1"))
	doc := valueDoc(t, body)
	if sum := doc.Find(`[data-testid="decoded-summary"]`).Text(); sum != "2 in flight" {
		t.Fatalf("conc summary %q", sum)
	}
	var hrefs []string
	doc.Find(`[data-testid="decoded-member"] a`).Each(func(_ int, s *goquery.Selection) { hrefs = append(hrefs, s.AttrOr("href", "")) })
	if len(hrefs) != 1 || hrefs[0] != route.KeyURL("gw", 0, "q:reserved:"+odd) {
		t.Fatalf("member links %q", hrefs)
	}
	// Following the link finds the very key.
	_, _, rb := get(t, f.srv.URL+hrefs[0])
	if sum := valueDoc(t, rb).Find(`[data-testid="decoded-summary"]`).Text(); !strings.HasPrefix(sum, "2048 tokens reserved, ") {
		t.Fatalf("linked reservation: %q", sum)
	}
	if fl := doc.Find(`[data-testid="decoded-member-flag"]`).Text(); fl != "no reservation" {
		t.Fatalf("flags %q", fl)
	}
	_, _, body = get(t, f.srv.URL+route.KeyURL("gw", 0, "q:reserved:req_forgot"))
	if a := valueDoc(t, body).Find(`[data-testid="decoded-alert"]`).Text(); !strings.Contains(a, "a reservation must expire") {
		t.Fatalf("reservation without TTL: %q", a)
	}

	rs.Client(14).ZAdd(ctx, "mg:score:leaderboard:g1", redis.Z{Score: 5, Member: "u1"})
	_, _, body = get(t, f.srv.URL+route.KeyURL("ei", 14, "mg:score:leaderboard:g1"))
	if h := valueDoc(t, body).Find(`[data-testid="decoded-link"]`).AttrOr("href", ""); h != (route.Window{Conn: "ei", DB: 14, Key: "mg:score:leaderboard:g1", N: route.DefaultRows}).URL() {
		t.Fatalf("leaderboard link %q", h)
	}
	rs.Client(9).SetBit(ctx, "user:ban:bloom", 7, 1)
	rs.Client(9).SAdd(ctx, "user:ban:set", "x")
	_, _, body = get(t, f.srv.URL+route.KeyURL("ei", 9, "user:ban:bloom"))
	if h := valueDoc(t, body).Find(`[data-testid="decoded-link"]`).AttrOr("href", ""); h != route.KeyURL("ei", 9, "user:ban:set") {
		t.Fatalf("bloom members link %q", h)
	}

	_, _, js := get(t, f.srv.URL+route.KeyURL("gw", 0, "q:conc:k1"), "Accept", "application/json")
	// The summary "2 in flight" is the API's in_flight.
	var conc struct {
		Decoded struct {
			Role  string
			State struct {
				InFlight *int `json:"in_flight"`
				Members  []json.RawMessage
			}
		}
	}
	if err := json.Unmarshal([]byte(js), &conc); err != nil || conc.Decoded.Role != "concurrency-set" || conc.Decoded.State.InFlight == nil ||
		*conc.Decoded.State.InFlight != 2 || len(conc.Decoded.State.Members) != 2 {
		t.Fatalf("JSON lacks the summary (2 in flight): %v %s", err, js)
	}
	rs.Client(2).Set(ctx, "verify:code:LOGIN:a@b.c", "5e884898da28047151d0e56f8dc62927", 5*time.Minute)
	_, _, js = get(t, f.srv.URL+route.KeyURL("ei", 2, "verify:code:LOGIN:a@b.c"), "Accept", "application/json")
	if strings.Contains(js, "5e884898da28") || !strings.Contains(strings.ToLower(js), `"withheld":true`) {
		t.Fatalf("sensitive JSON: %s", js)
	}
}
