package handlers_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/handlers"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview/action"
)

// Every GET route of the route table answers Accept: application/json,
// for every role, with the status its HTML answers (the same role checks,
// the same errors) and the same redirect; the JSON is valid UTF-8 and
// carries names that are not UTF-8 as {"b64": …}.
func TestEveryGETRouteAnswersJSON(t *testing.T) {
	f := newAuthFixture(t, nil, nil)
	ctx := context.Background()
	const (
		key   = "server:wallpaper-detail::1:a:1"
		bad   = "conf:\xff"
		board = "mg:score:leaderboard:2048"
		totp  = "totp:security:secret:plain:alice"
		seed  = "JBSWY3DPEHPK3PXPSECRETSEED"
	)
	f.redis.Client(3).Set(ctx, key, "{}", time.Hour)
	f.redis.Client(0).Set(ctx, bad, "v", 0)
	f.redis.Client(5).Set(ctx, totp, seed, time.Hour)
	f.redis.Client(14).ZAdd(ctx, board, redis.Z{Score: 9, Member: "m\xfe"}, redis.Z{Score: 3, Member: "fine"})
	// An audited action, for the audit page and an undo to preview.
	admin := action.Actor{User: "ada", Level: action.Admin}
	pv, err := f.run.Preview(ctx, admin, f.reg.All()[0], action.KindSetTTL, action.Request{Conn: "main", DB: 3, Key: key, Args: map[string]string{action.ArgTTL: "2h"}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := f.run.Execute(ctx, admin, f.reg.All()[0], pv)
	if err != nil {
		t.Fatal(err)
	}
	lb := route.Window{Conn: "main", DB: 14, Key: board, N: route.DefaultRows}
	examples := map[string][]string{
		route.Healthz:      {"/healthz"},
		route.Readyz:       {"/readyz"},
		route.Login:        {"/login", "/login?next=%2Fc%2Fmain"},
		route.Home:         {"/"},
		route.Overview:     {"/c/main", "/c/nope"},
		route.Database:     {"/c/main/db/3", "/c/main/db/5", "/c/main/db/x"},
		route.Keys:         {route.FamilyKeysURL("main", 5, "totp-secret-plain"), route.PrefixKeysURL("main", 0, "conf:"), route.FamilyKeysURL("main", 3, "nope")},
		route.Key:          {route.KeyURL("main", 3, key), route.KeyURL("main", 0, bad), route.KeyURL("main", 5, totp), route.KeyPath("main", 3)},
		route.Audit:        {"/audit", "/audit?since=yesterday"},
		route.Leaderboards: {"/leaderboards"},
		route.Leaderboard:  {lb.URL(), lb.URL() + "&member=fine", route.Window{Conn: "main", DB: 5, Key: totp, N: 10}.URL(), route.LeaderboardPath("main", 14) + "?n=0"},
		route.Live:         {route.LiveURL(handlers.OverviewTopic{Conn: "main"}.String()), route.LiveURL("bogus")},
		route.Account:      {"/account"},
		route.User:         {route.UserURL("main", "alice"), route.UserPath("main"), "/c/nope/user?name=x"},
		route.Search:       {route.SearchURL("main", "alice"), route.SearchURL("main", ""), route.SearchURL("main", "totp:*"), route.SearchURL("main", totp), "/c/nope/search?q=x"},
		route.Preview: {route.Action{Kind: action.KindDeleteKey, Conn: "main", DB: 3, Key: key}.PreviewURL(),
			route.Action{Kind: action.KindDeleteKey, Conn: "main", DB: 5, Key: totp}.PreviewURL()},
		route.UndoPreview: {route.Undo{Conn: "main", DB: 3, Record: out.ID}.URL()},
		route.Quotas:      {route.QuotasURL("main"), route.QuotasURL("nope")},
		route.GatewayKey:  {route.GatewayKeyURL("main", "gk_\xff"), route.GatewayKeyPath("main")},
		route.Vertique:    {route.VertiqueURL("main"), route.VertiqueURL("main") + "?policy=p"},
		route.Bans:        {route.BanCheckURL("main", "m\xfe<b>"), route.BansURL("main"), route.BansURL("main") + "?cursor=x", "/c/nope/bans"},
		route.Limits:      {route.LimitsURL("main"), route.LimitsURL("main") + "?q=alice", route.LimitsURL("nope")},
		route.Locks:       {route.LocksURL("main"), route.LocksURL("nope")},
		route.Violations:  {route.ViolationsURL("main"), route.ViolationsURL("nope")},
	}
	examples[route.AccountTokens] = []string{"/account/tokens"}
	who := []string{"anonymous", "vera", "sam", "ada"}
	browsers := make([]*browser, len(who))
	for i := range browsers {
		browsers[i] = newBrowser(t, f.srv.URL)
		if i > 0 {
			if code := browsers[i].login(who[i], "right-password"); code != http.StatusSeeOther {
				t.Fatalf("sign in %s: %d", who[i], code)
			}
		}
	}
	var matrix strings.Builder
	seen := map[string]bool{}
	for _, r := range f.routes {
		if r.Method != http.MethodGet || r.Asset || seen[r.Path] {
			continue
		}
		seen[r.Path] = true
		urls, ok := examples[r.Path]
		if !ok {
			t.Errorf("GET %s has no example: add one to this test", r.Path)
			continue
		}
		for _, u := range urls {
			row := u
			for i, b := range browsers {
				hc, hh, _ := b.do(http.MethodGet, u, nil)
				jc, jh, jb := b.do(http.MethodGet, u, nil, "Accept", "application/json")
				row += " " + who[i] + "=" + http.StatusText(jc)
				if hc != jc {
					t.Errorf("GET %s as %s: HTML %d, JSON %d", u, who[i], hc, jc)
					continue
				}
				if jc >= 300 && jc < 400 {
					if hh.Get("Location") != jh.Get("Location") {
						t.Errorf("GET %s as %s: HTML goes to %q, JSON to %q", u, who[i], hh.Get("Location"), jh.Get("Location"))
					}
					continue
				}
				if ct := jh.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") || !strings.Contains(hh.Get("Vary"), "Accept") {
					t.Errorf("GET %s as %s: Content-Type %q, Vary %q", u, who[i], ct, hh.Get("Vary"))
				}
				if !json.Valid([]byte(jb)) || !utf8.ValidString(jb) {
					t.Errorf("GET %s as %s: not valid JSON: %.200q", u, who[i], jb)
				}
				if strings.Contains(jb, seed) {
					t.Errorf("GET %s as %s: the JSON shows a sensitive value", u, who[i])
				}
			}
			matrix.WriteString(row + "\n")
		}
	}
	for path := range examples {
		if !seen[path] {
			t.Errorf("example for %s, which the route table does not serve", path)
		}
	}
	t.Logf("JSON matrix:\n%s", matrix.String())

	// What the JSON says, for a few pages.
	ada := browsers[3]
	get := func(u string, v any) {
		t.Helper()
		code, _, body := ada.do(http.MethodGet, u, nil, "Accept", "application/json")
		if code != http.StatusOK {
			t.Fatalf("GET %s: %d %.300s", u, code, body)
		}
		if err := json.Unmarshal([]byte(body), v); err != nil {
			t.Fatalf("GET %s: %v", u, err)
		}
	}
	var keyPage struct {
		Key  map[string]string
		Type string
		TTL  string
	}
	get(route.KeyURL("main", 0, bad), &keyPage)
	if b, _ := base64.StdEncoding.DecodeString(keyPage.Key["b64"]); string(b) != bad || keyPage.Type != "string" || keyPage.TTL != "none" {
		t.Errorf("key page of %q: %+v", bad, keyPage)
	}
	var board1 struct {
		Key  string
		Rows []struct {
			Rank   string
			Member json.RawMessage
			Score  string
		}
	}
	get(lb.URL(), &board1)
	if board1.Key != board || len(board1.Rows) != 2 || string(board1.Rows[0].Member) != `{"b64":"bf4="}` || board1.Rows[0].Rank != "1" || board1.Rows[1].Score != "3" {
		t.Errorf("leaderboard: %+v", board1)
	}
	var confirm map[string]any
	get(route.Action{Kind: action.KindDeleteKey, Conn: "main", DB: 3, Key: key}.PreviewURL(), &confirm)
	if _, leaks := confirm["Token"]; leaks || confirm["Title"] == "" {
		t.Errorf("confirmation: %v", confirm)
	}
	var probe handlers.Probe
	get("/readyz", &probe)
	if probe.Status != "ready" {
		t.Errorf("readyz: %+v", probe)
	}
	code, _, body := ada.do(http.MethodGet, "/c/nope", nil, "Accept", "application/json")
	var e struct {
		Code          int
		Title, Detail string
	}
	if err := json.Unmarshal([]byte(body), &e); err != nil || code != http.StatusNotFound || e.Code != code || e.Title != "No such connection" {
		t.Errorf("unknown connection: %d %s", code, body)
	}
}
