package handlers_test

import (
	"context"
	"encoding/base64"
	"html"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/handlers"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/internal/server"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/redisview/schema"
)

// argTwins are arguments that differ only in bytes a careless reader
// drops: surrounding spaces, a no-break space, an invalid byte. Each one
// is its own member, field or name; an action on one must act on it and
// on none of the others.
var argTwins = []string{"twin", "twin ", " twin ", "twin\u00a0", "twin\xff"}

// pageLinks are the hrefs of the links of testid on a page, unescaped.
func pageLinks(t *testing.T, body, testid string) []string {
	t.Helper()
	re := regexp.MustCompile(`href="([^"]*)"[^>]*data-testid="` + regexp.QuoteMeta(testid) + `"`)
	var out []string
	for _, m := range re.FindAllStringSubmatch(body, -1) {
		out = append(out, html.UnescapeString(m[1]))
	}
	return out
}

// linkFor is the one link of testid whose argument arg is exactly want.
func linkFor(t *testing.T, body, testid, arg, want string) string {
	t.Helper()
	var found []string
	for _, l := range pageLinks(t, body, testid) {
		if previewArgs(t, l).Get("arg."+arg) == want {
			found = append(found, l)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d %s links for %s %q among %q", len(found), testid, arg, want, pageLinks(t, body, testid))
	}
	return found[0]
}

// keyPageForm posts the key page's form of kind with its argument, as the
// browser does: the form's action (the target in its query) and the kind
// and argument (none when arg is "") in the body. It returns the preview.
func keyPageForm(t *testing.T, br *browser, db int, key, kind, arg, value string) (int, string) {
	t.Helper()
	code, _, page := br.do(http.MethodGet, route.KeyURL("main", db, key), nil)
	m := regexp.MustCompile(`<form method="post" action="([^"]+)"[^>]*data-testid="action-` + regexp.QuoteMeta(kind) + `"`).FindStringSubmatch(page)
	if code != http.StatusOK || m == nil {
		t.Fatalf("key page of %q: %d, no %s form", key, code, kind)
	}
	form := url.Values{"_csrf": {csrfRe.FindStringSubmatch(page)[1]}, "kind": {kind}}
	if arg != "" {
		if !strings.Contains(page, `name="arg.`+arg+`"`) {
			t.Fatalf("the %s form has no %s field", kind, arg)
		}
		form.Set("arg."+arg, value)
	}
	code, _, body := br.do(http.MethodPost, html.UnescapeString(m[1]), form)
	return code, body
}

// confirmPreview confirms a preview page and returns the result page.
func confirmPreview(t *testing.T, br *browser, preview string) string {
	t.Helper()
	tok, csrf := regexpToken.FindStringSubmatch(preview), csrfRe.FindStringSubmatch(preview)
	if tok == nil || csrf == nil {
		t.Fatalf("no confirmation form: %.600s", preview)
	}
	code, _, body := br.follow(http.MethodPost, route.Execute, url.Values{"_csrf": {csrf[1]}, "token": {html.UnescapeString(tok[1])}})
	if code != http.StatusOK || !strings.Contains(body, `data-testid="result-ok"`) {
		t.Fatalf("execute: %d %.600s", code, body)
	}
	return body
}

// followLink opens a preview link and confirms it.
func followLink(t *testing.T, br *browser, href string) {
	t.Helper()
	code, _, preview := br.do(http.MethodGet, href, nil)
	if code != http.StatusOK {
		t.Fatalf("preview %s: %d %.600s", href, code, preview)
	}
	confirmPreview(t, br, preview)
}

// lastArgs checks that the newest audit records of kind (intent and
// outcome) carry argument arg exactly as want.
func lastArgs(t *testing.T, f *console, kind, arg, want string) {
	t.Helper()
	recs, _, err := f.run.ReadAudit(context.Background(), action.Filter{Action: kind, Limit: 2})
	if err != nil || len(recs) != 2 {
		t.Fatalf("audit of %s: %v %d records", kind, err, len(recs))
	}
	for _, r := range recs {
		if got, ok := r.Args[arg]; !ok || got != want {
			t.Fatalf("audit %s %s record: %s %q, want %q", kind, r.Phase, arg, got, want)
		}
		if r.Phase == action.PhaseOutcome && r.Outcome != action.OutcomeOK {
			t.Fatalf("audit %s: %s %s", kind, r.Outcome, r.Error)
		}
	}
}

// The Remove link of a leaderboard row removes that member, byte for
// byte, with its own companion keys, and no twin.
func TestRemoveEntryLinkActsOnTheExactMember(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	ctx := context.Background()
	db := f.redis.Client(14)
	const board = "mg:score:leaderboard:tetris"
	high := func(m string) string { return "mg:score:high:tetris:" + m }
	sam := newBrowser(t, f.srv.URL)
	sam.login("sam", "right-password")
	for _, v := range argTwins {
		for i, m := range argTwins {
			db.ZAdd(ctx, board, redis.Z{Score: float64(9000001 + i), Member: m})
			db.Set(ctx, high(m), strconv.Itoa(9000001+i), time.Hour)
		}
		_, _, page := sam.do(http.MethodGet, "/c/main/db/14/leaderboard?k="+url.QueryEscape(board), nil)
		followLink(t, sam, linkFor(t, page, "lb-remove", "member", v))
		for _, m := range argTwins {
			_, err := db.ZScore(ctx, board, m).Result()
			left := db.Exists(ctx, high(m)).Val() == 1
			if gone := err == redis.Nil; gone != (m == v) || left != (m != v) {
				t.Fatalf("removing %q: member %q gone %v, its high score left %v", v, m, gone, left)
			}
		}
		lastArgs(t, f, action.KindRemoveLeaderboardEntry, action.ArgMember, v)
	}
}

// The user page's Ban link bans that name, byte for byte; the Bans page's
// Unban link of a member unbans that member and no twin.
func TestBanAndUnbanLinksActOnTheExactName(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	ctx := context.Background()
	db := f.redis.Client(9)
	seedBans(t, f, "someone")
	sam := newBrowser(t, f.srv.URL)
	sam.login("sam", "right-password")
	for _, v := range argTwins {
		_, _, page := sam.do(http.MethodGet, route.UserURL("main", v), nil)
		followLink(t, sam, linkFor(t, page, "user-ban-action", "name", v))
		for _, m := range argTwins {
			if in := db.SIsMember(ctx, "user:ban:set", m).Val(); in != (m == v) {
				t.Fatalf("banning %q: %q in the set %v", v, m, in)
			}
		}
		lastArgs(t, f, action.KindBan, action.ArgName, v)
		db.SRem(ctx, "user:ban:set", v)
	}

	seedBans(t, f, argTwins...)
	for _, v := range argTwins {
		_, _, page := sam.do(http.MethodGet, "/c/main/bans", nil)
		followLink(t, sam, linkFor(t, page, "ban-member-unban", "name", v))
		for _, m := range argTwins {
			if in := db.SIsMember(ctx, "user:ban:set", m).Val(); in != (m != v) {
				t.Fatalf("unbanning %q: %q in the set %v", v, m, in)
			}
		}
		lastArgs(t, f, action.KindUnban, action.ArgName, v)
		db.SAdd(ctx, "user:ban:set", v)
	}
}

// The key page's forms remove the set member and the hash field typed,
// byte for byte, and no twin.
func TestRemovePartFormsActOnTheExactPart(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	ctx := context.Background()
	db := f.redis.Client(0)
	ada := newBrowser(t, f.srv.URL)
	ada.login("ada", "right-password")
	for _, v := range argTwins {
		for _, m := range argTwins {
			db.SAdd(ctx, "plain:twins", m)
			db.HSet(ctx, "plain:twinfields", m, "value of "+m)
		}
		code, preview := keyPageForm(t, ada, 0, "plain:twins", action.KindRemoveSetMember, action.ArgMember, v)
		if code != http.StatusOK {
			t.Fatalf("remove member %q: %d %.600s", v, code, preview)
		}
		confirmPreview(t, ada, preview)
		code, preview = keyPageForm(t, ada, 0, "plain:twinfields", action.KindRemoveHashField, action.ArgField, v)
		if code != http.StatusOK {
			t.Fatalf("remove field %q: %d %.600s", v, code, preview)
		}
		confirmPreview(t, ada, preview)
		for _, m := range argTwins {
			member := db.SIsMember(ctx, "plain:twins", m).Val()
			field := db.HExists(ctx, "plain:twinfields", m).Val()
			if member != (m != v) || field != (m != v) {
				t.Fatalf("removing %q: %q still a member %v, a field %v", v, m, member, field)
			}
		}
		lastArgs(t, f, action.KindRemoveSetMember, action.ArgMember, v)
		lastArgs(t, f, action.KindRemoveHashField, action.ArgField, v)
	}
}

// A TTL typed with spaces around it is still the TTL it spells (the
// kind reads a duration), and the audit records what was typed; one with
// an invalid byte is refused, not cleaned.
func TestSetTTLFormCarriesTheTypedArgument(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	ctx := context.Background()
	db := f.redis.Client(0)
	db.Set(ctx, "plain:ttl", "x", 0)
	ada := newBrowser(t, f.srv.URL)
	ada.login("ada", "right-password")
	for _, v := range []string{"10m", "10m ", " 10m ", "10m\u00a0"} {
		db.Persist(ctx, "plain:ttl")
		code, preview := keyPageForm(t, ada, 0, "plain:ttl", action.KindSetTTL, action.ArgTTL, v)
		if code != http.StatusOK || !strings.Contains(preview, "SET TTL 10m") {
			t.Fatalf("set ttl %q: %d %.600s", v, code, preview)
		}
		confirmPreview(t, ada, preview)
		if ttl := db.TTL(ctx, "plain:ttl").Val(); ttl < 9*time.Minute || ttl > 10*time.Minute {
			t.Fatalf("ttl %q: %v", v, ttl)
		}
		lastArgs(t, f, action.KindSetTTL, action.ArgTTL, v)
	}
	db.Persist(ctx, "plain:ttl")
	if code, preview := keyPageForm(t, ada, 0, "plain:ttl", action.KindSetTTL, action.ArgTTL, "10m\xff"); code != http.StatusBadRequest {
		t.Fatalf("set ttl with an invalid byte: %d %.600s", code, preview)
	}
	if ttl := db.TTL(ctx, "plain:ttl").Val(); ttl != -1 {
		t.Fatalf("a refused TTL was set: %v", ttl)
	}
}

// Undo takes the record id exactly: the audit page's Undo link undoes it,
// an id with anything around it names no record.
func TestUndoRecordArgumentIsExact(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	ctx := context.Background()
	db := f.redis.Client(0)
	db.Set(ctx, "plain:undo", "v", 0)
	ada := newBrowser(t, f.srv.URL)
	ada.login("ada", "right-password")
	code, preview := keyPageForm(t, ada, 0, "plain:undo", action.KindDeleteKey, "", "")
	if code != http.StatusOK {
		t.Fatalf("delete: %d %.600s", code, preview)
	}
	confirmPreview(t, ada, preview)
	recs, _, err := f.run.ReadAudit(ctx, action.Filter{Action: action.KindDeleteKey, Limit: 1})
	if err != nil || len(recs) != 1 || !recs[0].Undoable() {
		t.Fatalf("no undoable record: %v %+v", err, recs)
	}
	id := recs[0].ID
	tok := ada.csrf("/audit")
	for _, twin := range []string{id + " ", " " + id, id + "\u00a0", id + "\xff"} {
		code, _, body := ada.do(http.MethodPost, route.Preview, url.Values{"_csrf": {tok}, "kind": {action.KindUndo}, "conn": {"main"}, "db": {"0"}, "arg.record": {twin}})
		if code != http.StatusBadRequest || regexpToken.MatchString(body) {
			t.Fatalf("undo of record %q: %d %.400s", twin, code, body)
		}
	}
	if db.Exists(ctx, "plain:undo").Val() != 0 {
		t.Fatal("a refused undo restored the key")
	}
	_, _, page := ada.do(http.MethodGet, "/audit", nil)
	var undo string
	for _, l := range pageLinks(t, page, "undo") {
		if previewArgs(t, l).Get("record") == id {
			undo = l
		}
	}
	if undo == "" {
		t.Fatalf("no Undo link for %s", id)
	}
	followLink(t, ada, undo)
	if db.Get(ctx, "plain:undo").Val() != "v" {
		t.Fatal("undo did not restore the key")
	}
	lastArgs(t, f, action.KindUndo, action.ArgRecord, id)
}

// A rebuild's member count is taken exactly: the page's own preview
// confirms, a count with a space around it is refused.
func TestRebuildMembersArgumentIsExact(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	seedBans(t, f, argTwins...)
	ada := newBrowser(t, f.srv.URL)
	ada.login("ada", "right-password")
	code, _, preview := ada.do(http.MethodPost, route.BansRebuildURL("main"), url.Values{"_csrf": {ada.csrf("/c/main/bans")}, "list": {"user-ban-bloom"}})
	if code != http.StatusOK || !strings.Contains(preview, "REPLACE the bloom") {
		t.Fatalf("rebuild preview %d %.600s", code, preview)
	}
	n := strconv.Itoa(len(argTwins))
	tok := ada.csrf("/c/main/bans")
	for _, twin := range []string{n + " ", " " + n, n + "\u00a0", n + "\xff"} {
		code, _, body := ada.do(http.MethodPost, route.Preview, url.Values{"_csrf": {tok}, "kind": {action.KindRebuildBloom}, "conn": {"main"}, "db": {"9"}, "key": {"user:ban:bloom"}, "arg.members": {twin}})
		if code != http.StatusBadRequest || regexpToken.MatchString(body) {
			t.Fatalf("rebuild with members %q: %d %.400s", twin, code, body)
		}
	}
	confirmPreview(t, ada, preview)
	lastArgs(t, f, action.KindRebuildBloom, action.ArgMembers, n)
}

// On a board the pack marks sensitive, the member is withheld, and so are
// the names of its metadata and high-score keys, which carry it: not on
// the preview, the confirmation, the Done page, the audit log (HTML and
// JSON, with the undo links an admin sees) nor the undo's refusal. The
// entry is removed whole all the same.
func TestSensitiveMemberNotShownThroughCompanionNames(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../redisview/schema/packs/eisland.yaml")
	if err != nil {
		t.Fatal(err)
	}
	y := strings.Replace(string(raw), "    role: leaderboard\n", "    role: leaderboard\n    sensitive: true\n", 1)
	pack, err := schema.Load("eisland", []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	rs := redistest.Start(t)
	f := startConsole(t, rs, server.Config{
		Conns: []redisview.ConnConfig{{Name: "main", URL: rs.URL(0)}}, Packs: []*schema.Pack{pack}, PackFor: map[string]string{"main": "eisland"},
		Auth: handlers.Auth{Users: testUsers(), Secret: []byte(testSecret)},
	}, nil).up(t)
	ctx := context.Background()
	db := f.redis.Client(14)
	const board, member = "mg:score:leaderboard:2048", "canaryuser"
	meta, high := "mg:score:user-meta:2048:"+member, "mg:score:high:2048:"+member
	db.ZAdd(ctx, board, redis.Z{Score: 4242, Member: member}, redis.Z{Score: 1, Member: "other"})
	db.HSet(ctx, meta, "score", "4242", "moves", "12")
	db.Expire(ctx, meta, time.Hour)
	db.Set(ctx, high, "4242", time.Hour)
	sam, ada := newBrowser(t, f.srv.URL), newBrowser(t, f.srv.URL)
	sam.login("sam", "right-password")
	ada.login("ada", "right-password")
	noMember := func(what, body string) {
		t.Helper()
		if strings.Contains(body, member) {
			i := strings.Index(body, member)
			t.Fatalf("%s names the member: …%s…", what, body[max(0, i-300):min(len(body), i+100)])
		}
	}

	code, preview := keyPageForm(t, sam, 14, board, action.KindRemoveLeaderboardEntry, action.ArgMember, member)
	noMember("the preview", preview)
	if code != http.StatusOK || !strings.Contains(preview, "name withheld") {
		t.Fatalf("preview: %d %.600s", code, preview)
	}
	// Nor in the confirmation token the page carries, however decoded.
	noMember("the preview's encoded parts", decodedRuns(preview))
	// A script's preview is the API's: it withholds the member alike.
	api := &apiClient{t: t, b: sam, csrf: sam.csrf(route.KeyURL("main", 14, board))}
	code, jsb := api.do(http.MethodPost, route.APIPreview, map[string]any{"kind": action.KindRemoveLeaderboardEntry, "conn": "main", "db": 14, "key": board, "args": map[string]string{action.ArgMember: member}})
	if js := string(jsb); code != http.StatusOK || !strings.Contains(js, "name withheld") {
		t.Fatalf("preview JSON: %d %.600s", code, js)
	}
	noMember("the preview's JSON", string(jsb))
	noMember("the Done page", confirmPreview(t, sam, preview))
	if n := db.Exists(ctx, meta, high).Val(); n != 0 || db.ZScore(ctx, board, member).Err() != redis.Nil {
		t.Fatalf("the entry was not removed whole (%d companions left)", n)
	}

	for _, b := range []*browser{sam, ada} {
		_, _, page := b.do(http.MethodGet, route.Audit, nil)
		noMember("the audit page", page)
		_, _, js := b.do(http.MethodGet, route.Audit, nil, "Accept", "application/json")
		noMember("the audit page's JSON", js)
		if !strings.Contains(js, "name withheld") {
			t.Fatalf("the audit JSON has no stand-in: %.600s", js)
		}
	}
	recs, _, err := f.run.ReadAudit(ctx, action.Filter{Action: action.KindRemoveLeaderboardEntry, Limit: 1})
	if err != nil || len(recs) != 1 {
		t.Fatalf("audit: %v %+v", err, recs)
	}
	code, _, refusal := ada.do(http.MethodGet, route.Undo{Conn: "main", DB: 14, Record: recs[0].ID}.URL(), nil)
	if code == http.StatusOK {
		t.Fatalf("undo of a sensitive entry: %d", code)
	}
	noMember("the undo's refusal", refusal)
}

// The key page's argument fields take a whole member, field or name: a
// browser silently cuts what is pasted into a field at its maxlength, and
// the cut member is another member (a twin of the one meant). The kinds
// bound their arguments themselves, with a message.
func TestKeyPageArgumentFieldsAreNotCut(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	ctx := context.Background()
	f.redis.Client(0).SAdd(ctx, "plain:twins", strings.Repeat("m", 100))
	f.redis.Client(0).HSet(ctx, "plain:twinfields", strings.Repeat("f", 100), "v")
	ada := newBrowser(t, f.srv.URL)
	ada.login("ada", "right-password")
	input := regexp.MustCompile(`<input name="arg\.[a-z]+"[^>]*>`)
	for _, key := range []string{"plain:twins", "plain:twinfields"} {
		_, _, page := ada.do(http.MethodGet, route.KeyURL("main", 0, key), nil)
		fields := input.FindAllString(page, -1)
		if len(fields) == 0 {
			t.Fatalf("%s: no argument field", key)
		}
		for _, in := range fields {
			if strings.Contains(in, "maxlength") {
				t.Errorf("%s: %s", key, in)
			}
		}
	}
	long := strings.Repeat("m", 100)
	code, preview := keyPageForm(t, ada, 0, "plain:twins", action.KindRemoveSetMember, action.ArgMember, long)
	if code != http.StatusOK {
		t.Fatalf("remove a 100-byte member: %d %.400s", code, preview)
	}
	confirmPreview(t, ada, preview)
	if f.redis.Client(0).SIsMember(ctx, "plain:twins", long).Val() {
		t.Fatal("the long member is still there")
	}
}

var base64Run = regexp.MustCompile(`[A-Za-z0-9+/_=-]{16,}`)

// decodedRuns is every run of base64 in s decoded, and the runs in those
// decoded in turn (a token may be base64 inside base64), joined.
func decodedRuns(s string) string {
	var out []string
	for range 3 {
		var next []string
		for _, run := range base64Run.FindAllString(s, -1) {
			for _, enc := range []*base64.Encoding{base64.RawURLEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.StdEncoding} {
				if b, err := enc.DecodeString(run); err == nil {
					next = append(next, string(b))
				}
			}
		}
		out = append(out, next...)
		s = strings.Join(next, "\n")
	}
	return strings.Join(out, "\n")
}
