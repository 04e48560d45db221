package handlers_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview/action"
)

// A confirmed action redirects (303) to its audit record's own page:
// reloading that page shows the record again and runs nothing; the page
// says what was done, shows what the key held before, offers Undo to an
// admin and leads back to the key.
func TestConfirmedActionLandsOnItsRecord(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	ctx := context.Background()
	key := "plain:<b>record</b>"
	f.redis.Client(0).Set(ctx, key, "x", 0)
	br := newBrowser(t, f.srv.URL)
	br.login("ada", "right-password")
	tok := br.csrf(route.KeyURL("main", 0, key))
	code, _, body := br.do(http.MethodPost, route.Action{Conn: "main", DB: 0, Key: key}.PreviewURL(), url.Values{"_csrf": {tok}, "kind": {action.KindDeleteKey}})
	conf := regexpToken.FindStringSubmatch(body)
	if code != http.StatusOK || conf == nil {
		t.Fatalf("preview: %d %.300s", code, body)
	}
	code, hdr, _ := br.do(http.MethodPost, route.Execute, url.Values{"_csrf": {tok}, "token": {conf[1]}})
	loc := hdr.Get("Location")
	if code != http.StatusSeeOther || !strings.HasPrefix(loc, route.Audit+"/") {
		t.Fatalf("execute: %d, Location %q; want 303 to the record's page", code, loc)
	}
	recs, _, err := f.run.ReadAudit(ctx, action.Filter{Action: action.KindDeleteKey})
	if err != nil || len(recs) != 2 {
		t.Fatalf("audit: %v, %d records", err, len(recs))
	}
	if want := route.AuditRecordURL(recs[0].ID); loc != want {
		t.Fatalf("Location %q, want the outcome's page %q", loc, want)
	}
	for range 2 { // the first visit, then a reload
		code, _, body = br.do(http.MethodGet, loc, nil)
		if code != http.StatusOK {
			t.Fatalf("record page: %d %.300s", code, body)
		}
	}
	if n, _, _ := f.run.ReadAudit(ctx, action.Filter{}); len(n) != 2 {
		t.Fatalf("after a reload the log holds %d records, want the 2 of one action", len(n))
	}
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if ok := doc.Find(`[data-testid="result-ok"]`).Text(); !strings.Contains(ok, "Done: ") || !strings.Contains(ok, key) {
		t.Errorf("result: %q", ok)
	}
	if doc.Find(`[id="audit-`+recs[0].ID+`"] [data-testid="undo"]`).Length() != 1 {
		t.Error("an admin is offered no Undo on the record's page")
	}
	if prior := doc.Find(`[data-testid="audit-intent"] [data-testid="audit-target"]`).Text(); !strings.Contains(prior, key) {
		t.Errorf("the page does not show what the key held before: %q", prior)
	}
	if back, _ := doc.Find(`[data-testid="record-back"]`).Attr("href"); back != route.KeyURL("main", 0, key) {
		t.Errorf("back leads to %q, want the key", back)
	}
	if strings.Contains(body, "<b>record</b>") {
		t.Error("the key's name is not escaped")
	}
	// Support may read the record, but Undo is an admin's.
	sam := newBrowser(t, f.srv.URL)
	sam.login("sam", "right-password")
	code, _, body = sam.do(http.MethodGet, loc, nil)
	if code != http.StatusOK || strings.Contains(body, `data-testid="undo"`) {
		t.Fatalf("support on the record: %d, undo offered %v", code, strings.Contains(body, `data-testid="undo"`))
	}
}

// A record's page answers 404 for an id that is not one, or that the log
// does not hold, and the confirmation it came from stays spent.
func TestAuditRecordPageNotFound(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	br := newBrowser(t, f.srv.URL)
	br.login("vera", "right-password")
	for _, u := range []string{route.AuditRecordURL("1-0"), route.AuditRecordURL("nope"), route.AuditRecordURL("1-2-3"), route.Audit + "/%3Cb%3E"} {
		if code, _, body := br.do(http.MethodGet, u, nil); code != http.StatusNotFound || strings.Contains(body, "<b>") {
			t.Errorf("GET %s: %d, want 404 (%.200s)", u, code, body)
		}
	}
}
