package handlers_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/action"
)

// appKeys lists the keys of databases 0–14 (the application's; 15 holds
// the audit log and sessions), "db/key", sorted.
func appKeys(t *testing.T, rs *redistest.Server) []string {
	t.Helper()
	ctx := context.Background()
	var out []string
	for db := range 15 {
		var cursor uint64
		for {
			keys, next, err := rs.Client(db).Scan(ctx, cursor, "*", 1000).Result()
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range keys {
				out = append(out, string(rune('a'+db))+"/"+k)
			}
			if cursor = next; cursor == 0 {
				break
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// The rebuild's preview (the form's POST) writes no key; its execution
// and undo leave none behind.
func TestRebuildPreviewWritesNoKey(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	seedBans(t, f, "a", "b", "c")
	ctx := context.Background()
	db := f.redis.Client(9)
	db.SAdd(ctx, "user:ban:set", "by hand")
	before := appKeys(t, f.redis)
	bloom := db.Dump(ctx, "user:ban:bloom").Val()
	ada := newBrowser(t, f.srv.URL)
	ada.login("ada", "right-password")
	code, _, preview := ada.do(http.MethodPost, "/c/main/bans/rebuild", url.Values{"_csrf": {ada.csrf("/c/main/bans")}, "list": {"user-ban-bloom"}})
	if code != http.StatusOK || !strings.Contains(preview, "REPLACE the bloom") {
		t.Fatalf("rebuild preview %d %.600s", code, preview)
	}
	if got := appKeys(t, f.redis); !slices.Equal(got, before) {
		t.Fatalf("the preview wrote keys: %v, before %v", got, before)
	}
	if db.Dump(ctx, "user:ban:bloom").Val() != bloom {
		t.Fatal("the preview changed the bloom")
	}
	tok := regexpToken.FindStringSubmatch(preview)
	code, _, done := ada.follow(http.MethodPost, "/actions/execute", url.Values{"_csrf": {ada.csrf("/")}, "token": {html.UnescapeString(tok[1])}})
	if code != http.StatusOK || !strings.Contains(done, `data-testid="result-ok"`) {
		t.Fatalf("execute %d %.600s", code, done)
	}
	if v := ada.bansJSON("/c/main/bans?check=" + url.QueryEscape("by hand")); v.Lists[userBan(t, v)].Verdict != "listed" {
		t.Fatalf("after the rebuild: %+v", v.Lists[userBan(t, v)])
	}
	recs, _, err := f.run.ReadAudit(ctx, action.Filter{Action: "rebuild-bloom"})
	if err != nil || len(recs) == 0 {
		t.Fatalf("audit %v %v", recs, err)
	}
	conn, err := f.reg.Get("main")
	if err != nil {
		t.Fatal(err)
	}
	pv, err := f.run.Preview(ctx, action.Actor{User: "ada", Level: action.Admin}, conn, action.KindUndo, action.UndoRequest(recs[0]))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.run.Execute(ctx, action.Actor{User: "ada", Level: action.Admin}, conn, pv); err != nil {
		t.Fatal(err)
	}
	if got := appKeys(t, f.redis); !slices.Equal(got, before) {
		t.Fatalf("after execute and undo: %v, before %v", got, before)
	}
	if db.Dump(ctx, "user:ban:bloom").Val() != bloom {
		t.Fatal("undo did not restore the bloom")
	}
}

// One member added to the ban set by hand, without its bits: support is
// offered "Set missing bits…" for it — on its row, in the check, in the
// mismatch's examples, on its user page — while ban and unban of every
// other name stay; a viewer is offered none of it. The link previews the
// fix of that member, byte-exact, and the fix makes it banned.
func TestBloomFixOfferedToSupport(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	seedBans(t, f, "a", "b", "c", "d", "e")
	ctx := context.Background()
	const hand = "hand <b>x</b> \xfe"
	f.redis.Client(9).SAdd(ctx, "user:ban:set", hand)
	vera, sam := newBrowser(t, f.srv.URL), newBrowser(t, f.srv.URL)
	vera.login("vera", "right-password")
	sam.login("sam", "right-password")

	_, _, page := sam.do(http.MethodGet, "/c/main/bans", nil)
	if !strings.Contains(page, `data-testid="consistency-few"`) {
		t.Fatalf("no mismatch reported: %.2000s", page)
	}
	if !strings.Contains(page, "does not match its set: 1 member lacks bloom bits.") {
		t.Fatal("the mismatch's count does not agree with its noun (one member)")
	}
	fixes := fixLinks(page, "ban-member-fix")
	if len(fixes) != 1 || len(fixLinks(page, "example-fix-bits")) != 1 || fixLinks(page, "example-fix-bits")[0] != fixes[0] {
		t.Fatalf("fix links %v, examples %v", fixes, fixLinks(page, "example-fix-bits"))
	}
	q := previewArgs(t, fixes[0])
	if q.Get("kind") != "set-bloom-bits" || q.Get("key") != "user:ban:set" || q.Get("arg.member") != hand {
		t.Fatalf("fix link %s", fixes[0])
	}
	// Unban of the others stays; not of the hand-added one.
	if n := len(links(page, "ban-member-unban")); n != 5 {
		t.Fatalf("%d unban links, want 5 (the others)", n)
	}
	_, _, page = sam.do(http.MethodGet, "/c/main/bans?check="+url.QueryEscape(hand), nil)
	if c := fixLinks(page, "fix-bits-action"); len(c) != 1 || c[0] != fixes[0] || len(links(page, "unban-action")) != 0 || len(links(page, "ban-action")) != 0 {
		t.Fatalf("check of the hand-added member: fix %v", c)
	}
	_, _, page = sam.do(http.MethodGet, "/c/main/bans?check=someone-new", nil)
	if len(links(page, "ban-action")) != 1 {
		t.Fatal("ban of another name is not offered")
	}
	_, _, up := sam.do(http.MethodGet, route.UserURL("main", "someone-new"), nil)
	if len(userLinks(up, "user-ban-action")) != 1 {
		t.Fatal("the user page of another name offers no ban")
	}
	_, _, up = sam.do(http.MethodGet, route.UserURL("main", hand), nil)
	if u := fixLinks(up, "user-fix-bloom"); len(u) != 1 || u[0] != fixes[0] || len(userLinks(up, "user-unban")) != 0 {
		t.Fatalf("user page fix links %v", u)
	}

	// The viewer sees the mismatch, never a fix.
	for _, path := range []string{"/c/main/bans", "/c/main/bans?check=" + url.QueryEscape(hand), route.UserURL("main", hand)} {
		code, _, vp := vera.do(http.MethodGet, path, nil)
		if code != http.StatusOK || strings.Contains(vp, "fix-bits") || strings.Contains(vp, "user-fix-bloom") || strings.Contains(vp, "ban-member-fix") {
			t.Fatalf("viewer %s: %d", path, code)
		}
	}

	// The link previews the fix; confirming it bans the name for real.
	code, _, pv := sam.do(http.MethodGet, fixes[0], nil, "Sec-Fetch-Site", "same-origin")
	if code != http.StatusOK || !strings.Contains(pv, "missing bloom bits") || !strings.Contains(pv, html.EscapeString(`"hand <b>x</b> \xfe"`)) {
		t.Fatalf("preview %d %.800s", code, pv)
	}
	tok := regexpToken.FindStringSubmatch(pv)
	code, _, done := sam.follow(http.MethodPost, "/actions/execute", url.Values{"_csrf": {sam.csrf("/")}, "token": {html.UnescapeString(tok[1])}})
	if code != http.StatusOK || !strings.Contains(done, `data-testid="result-ok"`) {
		t.Fatalf("execute %d %.600s", code, done)
	}
	v := vera.bansJSON("/c/main/bans?check=" + url.QueryEscape(hand))
	if c := v.Lists[userBan(t, v)]; c.Verdict != "listed" {
		t.Fatalf("after the fix: %+v", c)
	}
	for _, off := range redisview.BloomPositions(hand, 1000003, 6) {
		if f.redis.Client(9).GetBit(ctx, "user:ban:bloom", off).Val() != 1 {
			t.Fatalf("bit %d not set", off)
		}
	}
	recs, _, err := f.run.ReadAudit(ctx, action.Filter{Action: "set-bloom-bits"})
	if err != nil || len(recs) == 0 || recs[0].User != "sam" || recs[0].Args["member"] != hand {
		t.Fatalf("audit %+v %v", recs, err)
	}
}

// fixLinks are the hrefs of the links of testid, unescaped.
func fixLinks(body, testid string) []string {
	var out []string
	for _, part := range strings.Split(body, "<a ")[1:] {
		tag := part[:strings.Index(part, ">")]
		if !strings.Contains(tag, `data-testid="`+testid+`"`) {
			continue
		}
		_, rest, ok := strings.Cut(tag, `href="`)
		if !ok {
			continue
		}
		href, _, _ := strings.Cut(rest, `"`)
		out = append(out, html.UnescapeString(href))
	}
	return out
}
