package handlers_test

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/keydeck/keydeck/handlers"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/internal/server"
	"github.com/keydeck/keydeck/redisview/bulk"
)

var jobRe = regexp.MustCompile(`/c/[^/]+/bulk/([0-9A-Za-z-]+)`)

// A family's key list offers the bulk forms; a delete is counted, shown,
// confirmed, runs to the end; its undo brings every key back with its
// TTL; the audit page's Undo of the record leads to the job's page.
func TestBulkDeleteAndUndoPages(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	ctx := context.Background()
	db := f.redis.Client(0)
	for i := range 30 {
		db.Set(ctx, fmt.Sprintf("server:service-status::api%d", i), "on", 4*time.Minute)
	}
	db.Set(ctx, "keydeck:x", "Keydeck's own", 0)
	b := newBrowser(t, f.srv.URL)
	list := route.FamilyKeysURL("main", 0, "service-status")
	code, _, body := b.do(http.MethodGet, list, nil)
	if code != http.StatusOK || !strings.Contains(body, `data-testid="bulk-delete"`) {
		t.Fatalf("key list %d without bulk forms", code)
	}
	tok := csrfRe.FindStringSubmatch(body)[1]
	code, hdr, _ := b.do(http.MethodPost, route.BulkCountURL("main", 0), url.Values{"_csrf": {tok}, "kind": {"delete"}, "family": {"service-status"}})
	if code != http.StatusSeeOther || !jobRe.MatchString(hdr.Get("Location")) {
		t.Fatalf("count: %d %q", code, hdr.Get("Location"))
	}
	job := hdr.Get("Location")
	waitFor(t, "the count", func() bool {
		_, _, body = b.do(http.MethodGet, job, nil)
		return strings.Contains(body, `data-testid="bulk-confirm"`)
	})
	if !strings.Contains(body, "30 keys counted") || !strings.Contains(body, `data-testid="bulk-sample"`) || !strings.Contains(body, "Can be undone") {
		t.Fatalf("counted page: %s", body)
	}
	code, _, _ = b.do(http.MethodPost, job+"/start", url.Values{"_csrf": {tok}})
	if code != http.StatusSeeOther {
		t.Fatalf("start: %d", code)
	}
	waitFor(t, "the job", func() bool {
		_, _, body = b.do(http.MethodGet, job, nil)
		return strings.Contains(body, `data-status="done"`)
	})
	if n := db.DBSize(ctx).Val(); n != 1 || !strings.Contains(body, `data-testid="bulk-progress"`) {
		t.Fatalf("%d keys left after the job (keydeck:x alone should stay)", n)
	}
	if code, _, _ = b.do(http.MethodPost, job+"/start", url.Values{"_csrf": {tok}}); code != http.StatusConflict {
		t.Fatalf("second start: %d", code)
	}

	_, _, audit := b.do(http.MethodGet, route.Audit, nil)
	if !strings.Contains(audit, `href="`+job+`"`) {
		t.Fatalf("the audit page's undo does not lead to the job")
	}
	code, hdr, _ = b.do(http.MethodPost, job+"/undo", url.Values{"_csrf": {tok}})
	undo := hdr.Get("Location")
	if code != http.StatusSeeOther || undo == job {
		t.Fatalf("undo: %d %q", code, undo)
	}
	b.do(http.MethodPost, undo+"/start", url.Values{"_csrf": {tok}})
	waitFor(t, "the undo", func() bool {
		_, _, body = b.do(http.MethodGet, undo, nil)
		return strings.Contains(body, `data-status="done"`)
	})
	if n := db.DBSize(ctx).Val(); n != 31 {
		t.Fatalf("%d keys after the undo", n)
	}
	if ttl := db.PTTL(ctx, "server:service-status::api7").Val(); ttl <= 3*time.Minute || ttl > 4*time.Minute {
		t.Fatalf("ttl after undo %v", ttl)
	}
}

// A pattern list, and the typed count of a job that cannot be undone.
func TestBulkPatternTypedCount(t *testing.T) {
	t.Parallel()
	rs := startConsole(t, redistest.Start(t), server.Config{Bulk: bulk.Options{UndoKeys: 10}}, nil).up(t)
	ctx := context.Background()
	db := rs.redis.Client(0)
	for i := range 12 {
		db.Set(ctx, fmt.Sprintf("tmp:<b>%d", i), "x", 0)
	}
	db.Set(ctx, "other", "x", 0)
	b := newBrowser(t, rs.srv.URL)
	code, _, body := b.do(http.MethodGet, route.PatternKeysURL("main", 0, "tmp:*"), nil)
	if code != http.StatusOK || !strings.Contains(body, `data-testid="keys-pattern"`) || strings.Contains(body, "<b>") {
		t.Fatalf("pattern list: %d", code)
	}
	for _, bad := range []string{"?pattern=", "?pattern=a&family=b"} {
		if code, _, _ := b.do(http.MethodGet, "/c/main/db/0/keys"+bad, nil); code != http.StatusBadRequest {
			t.Fatalf("%s: %d", bad, code)
		}
	}
	tok := csrfRe.FindStringSubmatch(body)[1]
	if code, _, _ := b.do(http.MethodPost, route.BulkCountURL("main", 0), url.Values{"_csrf": {tok}, "kind": {"expire"}, "pattern": {"tmp:*"}, "ttl": {"12"}}); code != http.StatusBadRequest {
		t.Fatalf("a TTL without a unit: %d", code)
	}
	_, hdr, _ := b.do(http.MethodPost, route.BulkCountURL("main", 0), url.Values{"_csrf": {tok}, "kind": {"delete"}, "pattern": {"tmp:*"}})
	job := hdr.Get("Location")
	waitFor(t, "the count", func() bool {
		_, _, body = b.do(http.MethodGet, job, nil)
		return strings.Contains(body, `data-testid="bulk-confirm"`)
	})
	if !strings.Contains(body, `data-testid="bulk-typed"`) || !strings.Contains(body, "cannot be undone") {
		t.Fatal("a job that cannot be undone does not ask for the count typed")
	}
	for _, typed := range []string{"", "11", "twelve"} {
		if code, _, _ := b.do(http.MethodPost, job+"/start", url.Values{"_csrf": {tok}, "typed": {typed}}); code != http.StatusBadRequest {
			t.Fatalf("typed %q: %d", typed, code)
		}
	}
	if db.DBSize(ctx).Val() != 13 {
		t.Fatal("a refused confirmation changed keys")
	}
	if code, _, _ := b.do(http.MethodPost, job+"/start", url.Values{"_csrf": {tok}, "typed": {"12"}}); code != http.StatusSeeOther {
		t.Fatalf("typed 12: %d", code)
	}
	waitFor(t, "the job", func() bool {
		_, _, body = b.do(http.MethodGet, job, nil)
		return strings.Contains(body, `data-status="done"`)
	})
	if db.DBSize(ctx).Val() != 1 || strings.Contains(body, `data-testid="bulk-undo"`) {
		t.Fatalf("after the job: %d keys", db.DBSize(ctx).Val())
	}
}

// sensBulkJob counts a planted key's family for a bulk delete (never
// confirmed) and gives the job's page and topic, for the sensitive
// crawl: the page shows key names, sizes and counts, never a value.
func sensBulkJob(t *testing.T, b *browser, planted []sensKey) (page, topic string) {
	t.Helper()
	for _, k := range planted {
		if k.Conn != "eisland" || k.Family == nil {
			continue
		}
		_, _, body := b.do(http.MethodGet, route.FamilyKeysURL(k.Conn, k.DB, k.Family.ID), nil)
		m := csrfRe.FindStringSubmatch(body)
		if m == nil {
			t.Fatal("no CSRF token on the key list")
		}
		code, hdr, _ := b.do(http.MethodPost, route.BulkCountURL(k.Conn, k.DB), url.Values{"_csrf": {m[1]}, "kind": {"delete"}, "family": {k.Family.ID}})
		if code != http.StatusSeeOther {
			t.Fatalf("bulk count of %s: %d", k.Family.ID, code)
		}
		page = hdr.Get("Location")
		waitFor(t, "the bulk count", func() bool {
			_, _, body = b.do(http.MethodGet, page, nil)
			return strings.Contains(body, `data-status="counted"`)
		})
		id := jobRe.FindStringSubmatch(page)[1]
		return page, handlers.BulkTopic{Conn: k.Conn, ID: id, As: "counted"}.String()
	}
	t.Fatal("no planted key of eisland")
	return "", ""
}

var wsConnectRe = regexp.MustCompile(`ws-connect="([^"]+)"`)

// jobFrames follows a bulk job page's live topic, as the page does.
func jobFrames(t *testing.T, f *console, page string) <-chan string {
	t.Helper()
	m := wsConnectRe.FindStringSubmatch(page)
	if m == nil {
		t.Fatal("the job page has no live topic")
	}
	u, err := url.Parse(html.UnescapeString(m[1]))
	if err != nil {
		t.Fatal(err)
	}
	return topicFrames(t, f, u.Query().Get("topic"))
}

// Once a job has ended (cancelled, done), its page's live update takes
// Cancel and Confirm away: they stayed, offering what could no longer be
// done, until the page was drawn again.
func TestBulkLiveRemovesCancelOnceEnded(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	ctx := context.Background()
	db := f.redis.Client(0)
	for i := range 20 {
		db.Set(ctx, fmt.Sprintf("server:service-status::api%d", i), "on", 4*time.Minute)
	}
	b := newBrowser(t, f.srv.URL)
	_, _, body := b.do(http.MethodGet, route.FamilyKeysURL("main", 0, "service-status"), nil)
	tok := csrfRe.FindStringSubmatch(body)[1]
	counted := func() (string, string) {
		t.Helper()
		code, hdr, _ := b.do(http.MethodPost, route.BulkCountURL("main", 0), url.Values{"_csrf": {tok}, "kind": {"persist"}, "family": {"service-status"}})
		if code != http.StatusSeeOther || !jobRe.MatchString(hdr.Get("Location")) {
			t.Fatalf("count: %d %q", code, hdr.Get("Location"))
		}
		job := hdr.Get("Location")
		var page string
		waitFor(t, "the count", func() bool {
			_, _, page = b.do(http.MethodGet, job, nil)
			return strings.Contains(page, `data-testid="bulk-confirm"`)
		})
		if !strings.Contains(page, `data-testid="bulk-cancel"`) {
			t.Fatalf("a counted job's page offers no Cancel")
		}
		return job, page
	}
	const cancelGone, startGone = `<span id="bulk-cancel-slot" hx-swap-oob="true" hidden></span>`, `<span id="bulk-start-slot" hx-swap-oob="true" hidden></span>`

	// Cancelled while counted: both buttons go.
	job, page := counted()
	frames := jobFrames(t, f, page)
	if fr := waitFrame(t, frames, "the counted job", `data-status="counted"`); strings.Contains(fr, "bulk-cancel-slot") || strings.Contains(fr, "bulk-start-slot") {
		t.Fatalf("a counted job's live update takes its buttons away: %s", fr)
	}
	if code, _, _ := b.do(http.MethodPost, job+"/cancel", url.Values{"_csrf": {tok}}); code != http.StatusSeeOther {
		t.Fatalf("cancel: %d", code)
	}
	waitFrame(t, frames, "the cancelled job", `data-status="cancelled"`, cancelGone, startGone)

	// Confirmed and run to the end: Confirm goes once it runs, Cancel once done.
	job, page = counted()
	frames = jobFrames(t, f, page)
	waitFrame(t, frames, "the counted job", `data-status="counted"`)
	if code, _, _ := b.do(http.MethodPost, job+"/start", url.Values{"_csrf": {tok}}); code != http.StatusSeeOther {
		t.Fatalf("start: %d", code)
	}
	waitFrame(t, frames, "the finished job", `data-status="done"`, cancelGone, startGone)
	_, _, page = b.do(http.MethodGet, job, nil)
	if strings.Contains(page, `data-testid="bulk-cancel"`) || strings.Contains(page, `data-testid="bulk-start"`) {
		t.Fatal("a finished job's page offers Cancel or Confirm")
	}
}
