package handlers_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/handlers"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview/action"
)

// Every GET route of the route table answers Accept: application/json,
// for every role: a page with an API twin (Route.API) answers exactly what
// the twin operation answers the same person for the same request (the
// same status, the same body, the same problem details), and that answer
// validates against the OpenAPI document; a page without one answers 406,
// a problem naming where its data is; a probe answers its own JSON with
// its HTML's status. No JSON answer is a redirect to sign in; every one is
// valid UTF-8 JSON, varies on Accept, shows no sensitive value and carries
// names that are not UTF-8 as {"b64": …}.
func TestEveryGETRouteAnswersJSON(t *testing.T) {
	t.Parallel()
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
	const api = "/api/v1/connections/"
	// page: the page's URL; twin: the API request it is the same as ("":
	// the page has no twin, 406; "probe": a probe's own JSON).
	type ex struct{ page, twin string }
	examples := map[string][]ex{
		route.Healthz:  {{"/healthz", "probe"}},
		route.Readyz:   {{"/readyz", "probe"}},
		route.Login:    {{"/login", ""}, {"/login?next=%2Fc%2Fmain", ""}},
		route.Home:     {{"/", "/api/v1/connections"}},
		route.Overview: {{"/c/main", api + "main/overview"}, {"/c/nope", api + "nope/overview"}},
		route.Database: {{"/c/main/db/3", api + "main/db/3/stats"}, {"/c/main/db/5", api + "main/db/5/stats"}, {"/c/main/db/x", api + "main/db/x/stats"}},
		route.Keys: {{route.FamilyKeysURL("main", 5, "totp-secret-plain"), api + "main/db/5/keys" + q("family", "totp-secret-plain")},
			{route.PrefixKeysURL("main", 0, "conf:"), api + "main/db/0/keys" + q("prefix", "conf:")},
			{route.FamilyKeysURL("main", 3, "nope"), api + "main/db/3/keys" + q("family", "nope")}},
		route.Key: {{route.KeyURL("main", 3, key), api + "main/db/3/key" + q("key", key)}, {route.KeyURL("main", 0, bad), api + "main/db/0/key" + q("key", bad)},
			{route.KeyURL("main", 5, totp), api + "main/db/5/key" + q("key", totp)}, {route.KeyPath("main", 3), api + "main/db/3/key"}},
		route.Audit:        {{"/audit", "/api/v1/audit"}, {"/audit?since=yesterday", "/api/v1/audit?since=yesterday"}, {"/audit?id=x", "/api/v1/audit"}},
		route.Leaderboards: {{"/leaderboards", ""}},
		route.Leaderboard: {{lb.URL(), api + "main/db/14/leaderboard" + q("key", board, "start", "0", "count", strconv.Itoa(route.DefaultRows))},
			{route.Window{Conn: "main", DB: 5, Key: totp, N: 10}.URL(), api + "main/db/5/leaderboard" + q("key", totp, "start", "0", "count", "10")},
			{route.LeaderboardPath("main", 14) + "?n=0", api + "main/db/14/leaderboard?count=0"},
			// No n: the page's DefaultRows, not the API's lower default.
			{route.LeaderboardPath("main", 14) + "?k=" + url.QueryEscape(board), api + "main/db/14/leaderboard" + q("key", board, "count", strconv.Itoa(route.DefaultRows))},
			{lb.URL() + "&member=fine", api + "main/db/14/key" + q("key", board, "member", "fine")}},
		route.Live:          {{route.LiveURL(handlers.OverviewTopic{Conn: "main"}.String()), ""}, {route.LiveURL("bogus"), ""}},
		route.Account:       {{"/account", ""}},
		route.AccountTokens: {{"/account/tokens", ""}},
		route.User:          {{route.UserURL("main", "alice"), api + "main/user?name=alice"}, {route.UserPath("main"), api + "main/user"}, {"/c/nope/user?name=x", api + "nope/user?name=x"}},
		route.Search: {{route.SearchURL("main", "alice"), api + "main/search?q=alice"}, {route.SearchURL("main", ""), api + "main/search?q="},
			{route.SearchURL("main", "totp:*"), api + "main/search" + q("q", "totp:*")}, {route.SearchURL("main", totp), api + "main/search" + q("q", totp)}, {"/c/nope/search?q=x", api + "nope/search?q=x"}},
		route.Preview: {{route.Action{Kind: action.KindDeleteKey, Conn: "main", DB: 3, Key: key}.PreviewURL(), ""},
			{route.Action{Kind: action.KindDeleteKey, Conn: "main", DB: 5, Key: totp}.PreviewURL(), ""}},
		route.UndoPreview: {{route.Undo{Conn: "main", DB: 3, Record: out.ID}.URL(), ""}},
		route.AuditRecord: {{route.AuditRecordURL(out.ID), ""}, {route.AuditRecordURL("1-0"), ""}},
		route.Quotas:      {{route.QuotasURL("main"), api + "main/quotas"}, {route.QuotasURL("nope"), api + "nope/quotas"}},
		route.GatewayKey:  {{route.GatewayKeyURL("main", "gk_\xff"), api + "main/gateway-key" + q("id", "gk_\xff")}, {route.GatewayKeyPath("main"), api + "main/gateway-key"}},
		route.Vertique:    {{route.VertiqueURL("main"), api + "main/vertique"}, {route.VertiqueURL("main") + "?policy=p", api + "main/vertique/bucket?policy=p"}},
		route.Bans: {{route.BanCheckURL("main", "m\xfe<b>"), api + "main/ban-check" + q("name", "m\xfe<b>")}, {route.BansURL("main"), api + "main/bans"},
			{route.BansURL("main") + "?cursor=x", api + "main/bans?cursor=x"}, {"/c/nope/bans", api + "nope/bans"}},
		route.Limits:     {{route.LimitsURL("main"), api + "main/limits"}, {route.LimitsURL("main") + "?q=alice", api + "main/limits?q=alice"}, {route.LimitsURL("nope"), api + "nope/limits"}},
		route.Locks:      {{route.LocksURL("main"), api + "main/locks"}, {route.LocksURL("nope"), api + "nope/locks"}},
		route.Violations: {{route.ViolationsURL("main"), api + "main/violations"}, {route.ViolationsURL("nope"), api + "nope/violations"}},
		route.Slowlog:    {{route.SlowlogURL("main"), ""}},
		route.Latency:    {{route.LatencyURL("main"), ""}},
		route.PubSub:     {{route.PubSubURL("main"), ""}, {route.PubSubURL("main") + "?watch=alice&mode=pattern", ""}},
		route.Export:     {{route.ExportKeyURL("main", 3, key), ""}, {route.ExportFamilyURL("main", 5, "totp-secret-plain"), ""}},
		route.Import:     {{route.ImportURL("main", 3), ""}},
		route.Console:    {{route.ConsoleURL("main"), ""}, {route.ConsoleURL("main") + "?command=GET+x&db=5", ""}, {route.ConsoleURL("nope"), ""}},
		route.Server:     {{route.ServerInfoURL("main"), ""}},
		route.Clients:    {{route.ClientsURL("main"), ""}},
		route.BulkJob:    {{route.BulkJobURL("main", "20260101T000000-0123456789"), ""}},
	}
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
	k := newContract(t, &apiClient{t: t, b: browsers[3]})
	// The limits and locks sweeps read their families once before the
	// pages are compared with their twins: a first pass moves between two
	// requests.
	for _, op := range []string{api + "main/limits", api + "main/locks"} {
		redistest.Eventually(t, 30*time.Second, op+" swept", func() bool {
			var s struct{ Sweep struct{ State string } }
			_, _, body := browsers[3].do(http.MethodGet, op, nil, "Accept", "application/json")
			return json.Unmarshal([]byte(body), &s) == nil && s.Sweep.State == "swept"
		})
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
		for _, e := range urls {
			if (e.twin == "") != (r.API == "" && !r.Probe) {
				t.Errorf("GET %s: the route table's twin is %q, the example's %q", r.Path, r.API, e.twin)
			}
			row := e.page
			for i, b := range browsers {
				hc, _, _ := b.do(http.MethodGet, e.page, nil)
				jc, jh, jb := b.do(http.MethodGet, e.page, nil, "Accept", "application/json")
				row += " " + who[i] + "=" + strconv.Itoa(jc)
				ct := jh.Get("Content-Type")
				if !strings.Contains(jh.Get("Vary"), "Accept") || !json.Valid([]byte(jb)) || !utf8.ValidString(jb) {
					t.Errorf("GET %s as %s: Vary %q, not valid UTF-8 JSON: %.200q", e.page, who[i], jh.Get("Vary"), jb)
				}
				if strings.Contains(jb, seed) {
					t.Errorf("GET %s as %s: the JSON shows a sensitive value", e.page, who[i])
				}
				switch e.twin {
				case "probe":
					if hc != jc || !strings.HasPrefix(ct, "application/json") {
						t.Errorf("GET %s as %s: HTML %d, JSON %d %s", e.page, who[i], hc, jc, ct)
					}
				case "":
					if jc != http.StatusNotAcceptable || !strings.HasPrefix(ct, "application/problem+json") || !strings.Contains(jb, "/api/v1/") {
						t.Errorf("GET %s as %s: %d %s %.300s, want a 406 problem naming the API", e.page, who[i], jc, ct, jb)
					}
				default:
					ac, ah, ab := b.do(http.MethodGet, e.twin, nil, "Accept", "application/json")
					if jc != ac || ct != ah.Get("Content-Type") {
						t.Errorf("GET %s as %s: %d %s; its twin %s: %d %s", e.page, who[i], jc, ct, e.twin, ac, ah.Get("Content-Type"))
						continue
					}
					// The background walks and sweeps may move between the
					// two requests (a pass more, a later completed_at): the
					// page is asked again, up to twice, before they differ.
					for retry := 0; retry < 2 && jsonDiff([]byte(jb), []byte(ab)) != ""; retry++ {
						_, _, jb = b.do(http.MethodGet, e.page, nil, "Accept", "application/json")
						_, _, ab = b.do(http.MethodGet, e.twin, nil, "Accept", "application/json")
					}
					if d := jsonDiff([]byte(jb), []byte(ab)); d != "" {
						t.Errorf("GET %s as %s: not its twin's answer (%s):\n%.400s\n%.400s", e.page, who[i], d, jb, ab)
					}
					if jc == http.StatusUnauthorized && i > 0 || i == 0 && jc != http.StatusUnauthorized {
						t.Errorf("GET %s as %s: %d", e.page, who[i], jc)
					}
					ctype := "application/json"
					if jc >= 400 {
						ctype = "application/problem+json"
					}
					k.check(opOf(t, k, e.twin), jc, ctype, []byte(jb))
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

	// What the JSON says, for a few pages: the API's shapes.
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
	// The key page answers the API's key: no TTL is ttl_ms −1.
	var keyPage struct {
		Key   map[string]string
		Type  string
		TTLMs *int64 `json:"ttl_ms"`
	}
	get(route.KeyURL("main", 0, bad), &keyPage)
	if b, _ := base64.StdEncoding.DecodeString(keyPage.Key["b64"]); string(b) != bad || keyPage.Type != "string" || keyPage.TTLMs == nil || *keyPage.TTLMs != -1 {
		t.Errorf("key page of %q: %+v", bad, keyPage)
	}
	var board1 struct {
		Key   string
		Items []struct {
			Rank   int64
			Member json.RawMessage
			Score  float64
		}
	}
	get(lb.URL(), &board1)
	if board1.Key != board || len(board1.Items) != 2 || string(board1.Items[0].Member) != `{"b64":"bf4="}` || board1.Items[0].Rank != 1 || board1.Items[1].Score != 3 {
		t.Errorf("leaderboard: %+v", board1)
	}
	// An action's confirmation step is the page's; its JSON says which
	// operation of the API previews, executes or undoes instead.
	for u, op := range map[string]string{route.Action{Kind: action.KindDeleteKey, Conn: "main", DB: 3, Key: key}.PreviewURL(): "POST " + route.APIPreview,
		route.Undo{Conn: "main", DB: 3, Record: out.ID}.URL(): "POST " + route.APIUndo} {
		code, _, body := ada.do(http.MethodGet, u, nil, "Accept", "application/json")
		var p struct{ Detail string }
		if err := json.Unmarshal([]byte(body), &p); err != nil || code != http.StatusNotAcceptable || !strings.Contains(p.Detail, op) || strings.Contains(body, "token\":\"") {
			t.Errorf("GET %s as JSON: %d %s, want a 406 naming %s", u, code, body, op)
		}
	}
	var probe struct{ Status string }
	get("/readyz", &probe)
	if probe.Status != "ready" {
		t.Errorf("readyz: %+v", probe)
	}
	code, _, body := ada.do(http.MethodGet, "/c/nope", nil, "Accept", "application/json")
	var e struct {
		Status        int
		Title, Detail string
	}
	if err := json.Unmarshal([]byte(body), &e); err != nil || code != http.StatusNotFound || e.Status != code || e.Title != "No such connection" {
		t.Errorf("unknown connection: %d %s", code, body)
	}
}

// A page's POST asked for JSON is refused before it runs, as a problem:
// 406 (its data and actions are the API's), or 403 when the form is not
// this console's (no CSRF token) — never the page's own answer.
func TestPagePOSTAskedForJSONIsRefused(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	ada := newBrowser(t, f.srv.URL)
	if code := ada.login("ada", "right-password"); code != http.StatusSeeOther {
		t.Fatalf("sign in: %d", code)
	}
	for _, r := range f.routes {
		if r.Method != http.MethodPost {
			continue
		}
		code, hdr, body := ada.do(http.MethodPost, strings.ReplaceAll(r.Path, ":conn", "main"), nil, "Accept", "application/json")
		if code != http.StatusNotAcceptable && code != http.StatusForbidden || !strings.HasPrefix(hdr.Get("Content-Type"), "application/problem+json") {
			t.Errorf("POST %s: %d %s %.200s, want a 406 problem", r.Path, code, hdr.Get("Content-Type"), body)
		}
	}
}

// opOf is the document's operation ("GET /api/v1/…{conn}…") of a request
// path of the API.
func opOf(t *testing.T, k *contract, target string) string {
	t.Helper()
	path, _, _ := strings.Cut(target, "?")
	segs := strings.Split(path, "/")
	for op := range k.ops {
		method, tmpl, _ := strings.Cut(op, " ")
		ts := strings.Split(tmpl, "/")
		if method != http.MethodGet || len(ts) != len(segs) {
			continue
		}
		ok := true
		for i := range ts {
			if ts[i] != segs[i] && !strings.HasPrefix(ts[i], "{") {
				ok = false
				break
			}
		}
		if ok {
			return op
		}
	}
	t.Fatalf("no operation of the document serves %s", target)
	return ""
}

// jsonDiff says where two answers differ ("" when they do not): figures
// that age between the two requests (…_ms, times, ages) may differ a
// little, nothing else.
func jsonDiff(a, b []byte) string {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return "not JSON"
	}
	return diffAt("$", "", x, y)
}

var digits = regexp.MustCompile(`[0-9.]+`)

func diffAt(path, name string, x, y any) string {
	switch xv := x.(type) {
	case map[string]any:
		yv, ok := y.(map[string]any)
		if !ok || len(xv) != len(yv) {
			return path + ": different fields"
		}
		for k, v := range xv {
			if d := diffAt(path+"."+k, k, v, yv[k]); d != "" {
				return d
			}
		}
		return ""
	case []any:
		yv, ok := y.([]any)
		if !ok || len(xv) != len(yv) {
			return path + ": different lengths"
		}
		for i := range xv {
			if d := diffAt(path+"["+strconv.Itoa(i)+"]", name, xv[i], yv[i]); d != "" {
				return d
			}
		}
		return ""
	case float64:
		yv, ok := y.(float64)
		aging := strings.HasSuffix(name, "_ms") || strings.Contains(name, "age") || strings.Contains(name, "ttl")
		// A background walk or sweep's progress moves between two requests
		// (an empty database's quota walk completes a pass every few ms).
		progress := slices.Contains([]string{"passes", "seen", "scans", "cpu_share", "read_whole_keys", "ttl_only_keys"}, name)
		if !ok || xv != yv && !(aging && math.Abs(xv-yv) <= 5000) && !progress {
			return fmt.Sprintf("%s: %v ≠ %v", path, x, y)
		}
		return ""
	case string:
		yv, ok := y.(string)
		if !ok {
			return path + ": different types"
		}
		if xv != yv && strings.Contains(path, "violations") && digits.ReplaceAllString(xv, "#") == digits.ReplaceAllString(yv, "#") {
			return "" // a TTL violation names the TTL as it ages
		}
		if xv != yv {
			tx, e1 := time.Parse(time.RFC3339Nano, xv)
			ty, e2 := time.Parse(time.RFC3339Nano, yv)
			if e1 != nil || e2 != nil || tx.Sub(ty).Abs() > 5*time.Second {
				return fmt.Sprintf("%s: %q ≠ %q", path, xv, yv)
			}
		}
		return ""
	}
	if fmt.Sprint(x) != fmt.Sprint(y) {
		return fmt.Sprintf("%s: %v ≠ %v", path, x, y)
	}
	return ""
}

// A page's JSON refuses a parameter that neither the page's twin maps nor
// the twin operation takes: 400, a problem naming it — never the answer
// without it, as if it had been honoured. Parameters only the page reads
// (how the key page shows a value, which rows a family is scrolled to)
// are the page's, and the operation's answer is the same with them.
func TestPageJSONRefusesAnUnknownParameter(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	f.redis.Client(3).Set(context.Background(), "k", "v", 0)
	for _, u := range []string{"/c/main?bogus=1", route.KeyURL("main", 3, "k") + "&colour=red", route.LimitsURL("main") + "?filter=x", route.UserURL("main", "alice") + "&nmae=bob"} {
		code, hdr, body := get(t, f.srv.URL+u, "Accept", "application/json")
		var p struct {
			Status int
			Detail string
		}
		_ = json.Unmarshal([]byte(body), &p)
		want := strings.SplitN(strings.SplitN(u, "?", 2)[1], "=", 2)[0]
		if strings.Contains(u, "&") {
			want = strings.SplitN(u[strings.LastIndex(u, "&")+1:], "=", 2)[0]
		}
		if code != http.StatusBadRequest || !strings.HasPrefix(hdr.Get("Content-Type"), "application/problem+json") || p.Status != code || !strings.Contains(p.Detail, strconv.Quote(want)) {
			t.Errorf("GET %s as JSON: %d %s %.300s, want a 400 problem naming %q", u, code, hdr.Get("Content-Type"), body, want)
		}
	}
	for _, u := range []string{route.KeyValueURL("main", 3, "k", route.Value{View: "hex"}), route.LimitsURL("main") + "?q=a&fam=x&db=1&off=10"} {
		if code, _, body := get(t, f.srv.URL+u, "Accept", "application/json"); code != http.StatusOK {
			t.Errorf("GET %s as JSON: %d %.300s, want 200 (the page's own parameters)", u, code, body)
		}
	}
}

// A page parameter and the API name it stands for, both given, are one
// parameter twice: 400, never the one a map's order happens to pick
// (the HTML page reads its own name).
func TestPageJSONRefusesAParameterGivenTwice(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	ctx := context.Background()
	f.redis.Client(3).Set(ctx, "a", "1", 0)
	f.redis.Client(3).Set(ctx, "b", "2", 0)
	u := route.KeyURL("main", 3, "a") + "&key=b"
	for range 20 {
		code, _, body := get(t, f.srv.URL+u, "Accept", "application/json")
		if code != http.StatusBadRequest || !strings.Contains(body, `\"k\"`) || !strings.Contains(body, `\"key\"`) {
			t.Fatalf("GET %s as JSON: %d %.300s, want a 400 naming k and key", u, code, body)
		}
	}
}
