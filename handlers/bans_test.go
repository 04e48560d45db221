package handlers_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/internal/server"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/action"
)

// hostileBanned are banned names a page must carry byte-exact: HTML,
// unicode beyond the BMP, colons and spaces, a 1 KB name, invalid UTF-8.
var hostileBanned = []string{
	`eve"><script>alert(1)</script>'`, "🦊 fox:ops admin", "韩梅梅", strings.Repeat("界", 342), "bad\xff\xfename",
}

func seedBans(t *testing.T, f *console, names ...string) {
	t.Helper()
	ctx := context.Background()
	db := f.redis.Client(9)
	db.SetBit(ctx, "user:ban:bloom", 1000003-1, 0)
	for _, n := range names {
		db.SAdd(ctx, "user:ban:set", n)
		for _, off := range redisview.BloomPositions(n, 1000003, 6) {
			db.SetBit(ctx, "user:ban:bloom", off, 1)
		}
	}
}

// bansJSON is the part of the page's JSON a support tool reads: with
// ?check= the API's ban-check, the name against every list.
type bansJSON struct {
	Name  json.RawMessage
	Lists []banListJSON
}

type banListJSON struct {
	List, Purpose string
	Read          bool
	Positions     []struct{ Offset, Bit int64 }
	BloomHit      bool `json:"bloom_hit"`
	InSet         bool `json:"in_set"`
	Verdict       string
	Words         string
}

// jsonName decodes a name as the API writes it: a string, or {"b64": …}
// for bytes that are not UTF-8.
func jsonName(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var b struct{ B64 string }
	if err := json.Unmarshal(raw, &b); err != nil {
		t.Fatalf("name %s", raw)
	}
	out, err := base64.StdEncoding.DecodeString(b.B64)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func (b *browser) bansJSON(path string) bansJSON {
	b.t.Helper()
	code, _, body := b.do(http.MethodGet, path, nil, "Accept", "application/json")
	if code != http.StatusOK {
		b.t.Fatalf("%s: %d %.300s", path, code, body)
	}
	var v bansJSON
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		b.t.Fatalf("%s: %v", path, err)
	}
	return v
}

func userBan(t *testing.T, v bansJSON) int {
	for i, l := range v.Lists {
		if l.List == "user-ban-bloom" {
			if !l.Read || l.Purpose != "ban" {
				t.Fatalf("user-ban-bloom not read as a ban list: %+v", l)
			}
			return i
		}
	}
	t.Fatalf("no user-ban-bloom list: %+v", v)
	return -1
}

var hrefRe = regexp.MustCompile(`href="([^"]*)"[^>]*data-testid="(ban-member-check|unban-action|ban-action|ban-member-unban)"`)

func links(body, testid string) []string {
	var out []string
	for _, m := range hrefRe.FindAllStringSubmatch(body, -1) {
		if m[2] == testid {
			out = append(out, html.UnescapeString(m[1]))
		}
	}
	return out
}

func TestBansPageVerdictsJSONAndRoles(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	seedBans(t, f, append([]string{"plain-cheater"}, hostileBanned...)...)
	vera, sam, ada := newBrowser(t, f.srv.URL), newBrowser(t, f.srv.URL), newBrowser(t, f.srv.URL)
	for b, who := range map[*browser]string{vera: "vera", sam: "sam", ada: "ada"} {
		if code := b.login(who, "right-password"); code != http.StatusSeeOther {
			t.Fatalf("sign in %s: %d", who, code)
		}
	}

	// Every hostile name, checked by deep link, comes back byte-exact with
	// the verdict the application gives.
	for _, name := range append(hostileBanned, "not-banned <i>x</i>") {
		v := vera.bansJSON("/c/main/bans?check=" + url.QueryEscape(name))
		l := v.Lists[userBan(t, v)]
		if jsonName(t, v.Name) != name {
			t.Fatalf("check of %q: %+v", name, l)
		}
		want, words := "listed", "banned"
		if strings.HasPrefix(name, "not-banned") {
			want, words = "not-listed", "not banned"
		}
		if l.Verdict != want || l.Words != words || l.InSet != (want == "listed") || len(l.Positions) != 6 {
			t.Fatalf("check of %q: %+v", name, l)
		}
		for i, off := range redisview.BloomPositions(name, 1000003, 6) {
			if p := l.Positions[i]; p.Offset != off || (p.Bit == 1) != (want == "listed") {
				t.Fatalf("%q position %d: %+v, want offset %d", name, i, p, off)
			}
		}
	}

	// The viewer sees verdicts and health, never an action.
	code, _, page := vera.do(http.MethodGet, "/c/main/bans?check="+url.QueryEscape(hostileBanned[0]), nil)
	if code != http.StatusOK || !strings.Contains(page, `data-testid="ban-verdict">banned<`) || !strings.Contains(page, `data-testid="ban-health"`) {
		t.Fatalf("viewer page %d %.500s", code, page)
	}
	// In plain words, without an action the viewer cannot take; the bits
	// and health behind "How this was read".
	if !strings.Contains(page, "is banned: the application turns them away.") || strings.Contains(page, "To lift the ban") {
		i := max(strings.Index(page, `ban-check"`), 0)
		t.Fatalf("viewer page's plain verdict %.1500s", page[i:])
	}
	if hr, health := strings.Index(page, `data-testid="how-read-`), strings.Index(page, `data-testid="ban-health"`); hr < 0 || health < hr {
		t.Fatalf("health not behind How this was read (%d, %d)", hr, health)
	}
	for _, bad := range []string{`data-testid="unban-action"`, `data-testid="ban-member-unban"`, `data-testid="ban-action"`, `data-testid="rebuild-`, "<script>alert"} {
		if strings.Contains(page, bad) {
			t.Fatalf("viewer page holds %s", bad)
		}
	}
	// The member rows' check links carry each name byte-exact.
	got := map[string]bool{}
	for _, href := range links(page, "ban-member-check") {
		u, err := url.Parse(href)
		if err != nil {
			t.Fatal(err)
		}
		got[u.Query().Get("check")] = true
	}
	for _, name := range hostileBanned {
		if !got[name] {
			t.Fatalf("no check link carries %q (links: %v)", name, got)
		}
	}

	// Support gets ban and unban links; admin alone the rebuild.
	_, _, page = sam.do(http.MethodGet, "/c/main/bans?check="+url.QueryEscape(hostileBanned[1]), nil)
	unban := links(page, "unban-action")
	if len(unban) != 1 || len(links(page, "ban-member-unban")) != len(hostileBanned)+1 || strings.Contains(page, `data-testid="rebuild-`) {
		t.Fatalf("support page: %d unban links, %d row links", len(unban), len(links(page, "ban-member-unban")))
	}
	if _, _, adminPage := ada.do(http.MethodGet, "/c/main/bans", nil); !strings.Contains(adminPage, `data-testid="rebuild-user-ban-bloom"`) {
		t.Fatal("admin page lacks the rebuild form")
	}

	// Support unbans through the link: preview, confirm; the verdict is
	// now a false positive, and the bits stayed.
	code, _, preview := sam.do(http.MethodGet, unban[0], nil)
	if code != http.StatusOK || !strings.Contains(preview, "UNBAN") || !strings.Contains(preview, "bits stay set") {
		t.Fatalf("preview %d %.800s", code, preview)
	}
	tok := regexpToken.FindStringSubmatch(preview)
	if tok == nil {
		t.Fatal("no confirmation token")
	}
	code, _, done := sam.follow(http.MethodPost, "/actions/execute", url.Values{"_csrf": {sam.csrf("/")}, "token": {html.UnescapeString(tok[1])}})
	if code != http.StatusOK || !strings.Contains(done, `data-testid="result-ok"`) {
		t.Fatalf("execute %d %.800s", code, done)
	}
	v := vera.bansJSON("/c/main/bans?check=" + url.QueryEscape(hostileBanned[1]))
	c := v.Lists[userBan(t, v)]
	if c.Verdict != "false-positive" || c.Words != "bloom says maybe, set says no: not banned — false positive" || !c.BloomHit || c.InSet {
		t.Fatalf("after unban: %+v", c)
	}
	recs, _, err := f.run.ReadAudit(context.Background(), action.Filter{Action: "unban"})
	if err != nil || len(recs) == 0 || recs[0].Action != "unban" || recs[0].Args["name"] != hostileBanned[1] || recs[0].User != "sam" {
		t.Fatalf("audit %+v %v", recs, err)
	}

	// Read-only blooms: check and health, no actions even for admin.
	_, _, adminPage := ada.do(http.MethodGet, "/c/main/bans?check=x", nil)
	section := adminPage[strings.Index(adminPage, `data-testid="banlist-version-app-bloom"`):]
	section = section[:strings.Index(section, "</section>")]
	if !strings.Contains(section, "read-only filter") || strings.Contains(section, "Unban") || strings.Contains(section, `data-testid="ban-action"`) {
		t.Fatalf("version bloom section: %.600s", section)
	}
}

func TestBansPageMismatchDisablesActions(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	ctx := context.Background()
	db := f.redis.Client(9)
	db.SetBit(ctx, "user:ban:bloom", 1000003-1, 0)
	for _, n := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} { // at least bans.MinWidespreadChecked
		db.SAdd(ctx, "user:ban:set", n)
		for _, off := range redisview.BloomPositions(n, 1<<20, 6) { // another bit count
			db.SetBit(ctx, "user:ban:bloom", off, 1)
		}
	}
	code, _, page := get(t, f.srv.URL+"/c/main/bans?check=a")
	if code != http.StatusOK || !strings.Contains(page, `data-testid="consistency-mismatch"`) || !strings.Contains(page, "silently ignored") ||
		!strings.Contains(page, "Ban and unban are disabled") {
		t.Fatalf("page %d %.300s", code, page)
	}
	if strings.Contains(page, `data-testid="ban-member-unban"`) || strings.Contains(page, `data-testid="ban-action"`) {
		t.Fatal("actions offered on a mismatched bloom")
	}
}

func TestBanActionsOnKeyPages(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	seedBans(t, f, "x")
	ctx := context.Background()
	f.redis.Client(0).SetBit(ctx, "version:app:bloom", 10, 1)
	f.redis.Client(0).SAdd(ctx, "version:app:set", "v1")
	sam, vera := newBrowser(t, f.srv.URL), newBrowser(t, f.srv.URL)
	sam.login("sam", "right-password")
	vera.login("vera", "right-password")
	for _, tc := range []struct {
		db   int
		key  string
		want bool
	}{{9, "user:ban:set", true}, {9, "user:ban:bloom", true}, {0, "version:app:bloom", false}, {0, "version:app:set", false}} {
		_, _, page := sam.do(http.MethodGet, "/c/main/db/"+string(rune('0'+tc.db))+"/key?k="+url.QueryEscape(tc.key), nil)
		for _, kind := range []string{"ban", "unban"} {
			if got := strings.Contains(page, `data-testid="action-`+kind+`"`); got != tc.want {
				t.Errorf("support on %s: %s offered %v, want %v", tc.key, kind, got, tc.want)
			}
		}
		if strings.Contains(page, `data-testid="action-rebuild-bloom"`) {
			t.Errorf("rebuild offered on the key page of %s", tc.key)
		}
		_, _, page = vera.do(http.MethodGet, "/c/main/db/"+string(rune('0'+tc.db))+"/key?k="+url.QueryEscape(tc.key), nil)
		if strings.Contains(page, `data-testid="action-ban"`) || strings.Contains(page, `data-testid="action-unban"`) {
			t.Errorf("viewer offered ban actions on %s", tc.key)
		}
	}
}

func TestRebuildThroughThePage(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	ctx := context.Background()
	db := f.redis.Client(9)
	db.SetBit(ctx, "user:ban:bloom", 1000003-1, 0)
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		db.SAdd(ctx, "user:ban:set", n)
		for _, off := range redisview.BloomPositions("seed:"+n, 1000003, 6) { // another seed
			db.SetBit(ctx, "user:ban:bloom", off, 1)
		}
	}
	sam, ada := newBrowser(t, f.srv.URL), newBrowser(t, f.srv.URL)
	sam.login("sam", "right-password")
	ada.login("ada", "right-password")
	if code, _, _ := sam.do(http.MethodPost, "/c/main/bans/rebuild", url.Values{"_csrf": {sam.csrf("/")}, "list": {"user-ban-bloom"}}); code != http.StatusForbidden {
		t.Fatalf("support rebuild: %d", code)
	}
	if keys := appKeys(t, f.redis); len(keys) != 2 {
		t.Fatalf("support's refused rebuild wrote a key: %v", keys)
	}
	code, _, preview := ada.do(http.MethodPost, "/c/main/bans/rebuild", url.Values{"_csrf": {ada.csrf("/c/main/bans")}, "list": {"user-ban-bloom"}})
	if code != http.StatusOK || !strings.Contains(preview, "REPLACE the bloom") {
		t.Fatalf("rebuild preview %d %.600s", code, preview)
	}
	tok := regexpToken.FindStringSubmatch(preview)
	code, _, done := ada.follow(http.MethodPost, "/actions/execute", url.Values{"_csrf": {ada.csrf("/")}, "token": {html.UnescapeString(tok[1])}})
	if code != http.StatusOK || !strings.Contains(done, `data-testid="result-ok"`) {
		t.Fatalf("execute %d %.600s", code, done)
	}
	v := ada.bansJSON("/c/main/bans?check=c")
	if c := v.Lists[userBan(t, v)]; c.Verdict != "listed" {
		t.Fatalf("after the rebuild: %+v", c)
	}
	recs, _, _ := f.run.ReadAudit(ctx, action.Filter{Action: "rebuild-bloom"})
	if len(recs) == 0 || recs[0].User != "ada" {
		t.Fatalf("audit %+v", recs)
	}
}

// A ban through the key page's form carries a hostile name byte-exact to
// the set and the bloom.
func TestBanThroughKeyPageFormByteExact(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	seedBans(t, f, "someone")
	const name = "bad\xff<b>name</b> ops:x 🦊"
	sam := newBrowser(t, f.srv.URL)
	sam.login("sam", "right-password")
	form := url.Values{"_csrf": {sam.csrf("/c/main/db/9/key?k=user%3Aban%3Aset")}, "kind": {"ban"}, "conn": {"main"}, "db": {"9"}, "key": {"user:ban:set"}, "arg.name": {name}}
	code, _, preview := sam.do(http.MethodPost, "/actions/preview", form)
	if code != http.StatusOK || !strings.Contains(preview, "BAN") || strings.Contains(preview, "<b>name</b>") {
		t.Fatalf("preview %d %.600s", code, preview)
	}
	tok := regexpToken.FindStringSubmatch(preview)
	if tok == nil {
		t.Fatalf("no token: %.600s", preview)
	}
	if code, _, done := sam.follow(http.MethodPost, "/actions/execute", url.Values{"_csrf": {sam.csrf("/")}, "token": {html.UnescapeString(tok[1])}}); code != http.StatusOK {
		t.Fatalf("execute %d %.600s", code, done)
	}
	ctx := context.Background()
	if ok, _ := f.redis.Client(9).SIsMember(ctx, "user:ban:set", name).Result(); !ok {
		t.Fatal("the exact name is not in the set")
	}
	for _, off := range redisview.BloomPositions(name, 1000003, 6) {
		if b, _ := f.redis.Client(9).GetBit(ctx, "user:ban:bloom", off).Result(); b != 1 {
			t.Fatalf("bit %d of the exact name not set", off)
		}
	}
	v := newBrowser(t, f.srv.URL)
	v.login("vera", "right-password")
	j := v.bansJSON("/c/main/bans?check=" + url.QueryEscape(name))
	if c := j.Lists[userBan(t, j)]; jsonName(t, j.Name) != name || c.Words != "banned" {
		t.Fatalf("check %+v", c)
	}
}

// With Redis gone the page says what it could not read, and claims
// nothing about the bloom (not "does not exist", not "consistent").
func TestBansPageDisconnected(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	seedBans(t, f, "x")
	f.redis.Stop()
	waitFor(t, "monitor sees redis down", func() bool { return !f.reg.All()[0].Status().Up })
	code, _, page := get(t, f.srv.URL+"/c/main/bans?check=x")
	if code != http.StatusOK || !strings.Contains(page, "is disconnected") || !strings.Contains(page, `data-testid="ban-health-unknown"`) {
		t.Fatalf("page %d %.600s", code, page)
	}
	for _, claim := range []string{`data-testid="bloom-missing"`, `data-testid="consistency-ok"`, `data-testid="ban-verdict">not banned`, `data-testid="ban-members-empty"`} {
		if strings.Contains(page, claim) {
			t.Fatalf("a disconnected page claims %s", claim)
		}
	}
}

// A connection whose pack has no bloom with an exact set says so.
func TestBansPageEmpty(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	f := startConsole(t, rs, server.Config{Conns: []redisview.ConnConfig{{Name: "main", URL: rs.URL(0)}}, PackFor: map[string]string{"main": "gateway"}}, nil).up(t)
	code, _, page := get(t, f.srv.URL+"/c/main/bans?check=x")
	if code != http.StatusOK || !strings.Contains(page, `data-testid="bans-empty"`) || !strings.Contains(page, "describes no bloom filter") || strings.Contains(page, `data-testid="ban-check"`) {
		t.Fatalf("page %d %.600s", code, page)
	}
	if code, _, _ := get(t, f.srv.URL+"/c/nope/bans"); code != http.StatusNotFound {
		t.Fatalf("unknown connection: %d", code)
	}
}
