package handlers_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/route"
)

// The confirmation and Done pages say each change once: an action on one
// key is summed up by its change, which is not printed a second time.
func TestConfirmationSaysEachChangeOnce(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	f.redis.Client(0).Set(context.Background(), "plain:string", "x", 0)
	br := newBrowser(t, f.srv.URL)
	br.login("ada", "right-password")
	_, _, page := br.do(http.MethodGet, route.KeyURL("main", 0, "plain:string"), nil)
	tok := csrfRe.FindStringSubmatch(page)[1]
	code, _, body := br.do(http.MethodPost, route.Action{Conn: "main", DB: 0, Key: "plain:string"}.PreviewURL(), url.Values{"_csrf": {tok}, "kind": {"delete-key"}})
	if code != http.StatusOK {
		t.Fatalf("preview: %d %.300s", code, body)
	}
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	summary := strings.TrimSpace(doc.Find(`[data-testid="confirm-summary"]`).Text())
	if summary == "" || doc.Find(`[data-testid="confirm-change"]`).Length() != 1 {
		t.Fatalf("summary %q, %d changes", summary, doc.Find(`[data-testid="confirm-change"]`).Length())
	}
	if n := strings.Count(doc.Find(`[data-testid="confirm"]`).Text(), summary); n != 1 {
		t.Fatalf("the confirmation says %q %d times", summary, n)
	}
	conf := regexpToken.FindStringSubmatch(body)
	code, _, body = br.follow(http.MethodPost, "/actions/execute", url.Values{"_csrf": {tok}, "token": {conf[1]}})
	if code != http.StatusOK {
		t.Fatalf("execute: %d %.300s", code, body)
	}
	doc, _ = goquery.NewDocumentFromReader(strings.NewReader(body))
	if n := strings.Count(doc.Find(`[data-testid="result-ok"]`).Text(), summary); n != 1 {
		t.Fatalf("the Done page says %q %d times: %q", summary, n, doc.Find(`[data-testid="result-ok"]`).Text())
	}
}

// An action on several keys lists each change once, without repeating
// them all joined as a summary.
func TestConfirmationListsSeveralChangesOnce(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	ctx := context.Background()
	db := f.redis.Client(14)
	db.ZAdd(ctx, "mg:score:leaderboard:2048", redis.Z{Score: 9000, Member: "ana"})
	db.HSet(ctx, "mg:score:user-meta:2048:ana", "score", 9000, "durationMs", 61500, "moves", 12, "achievedAt", 1748736000123)
	br := newBrowser(t, f.srv.URL)
	br.login("ada", "right-password")
	_, _, page := br.do(http.MethodGet, route.KeyURL("main", 14, "mg:score:leaderboard:2048"), nil)
	tok := csrfRe.FindStringSubmatch(page)[1]
	code, _, body := br.do(http.MethodPost, route.Action{Conn: "main", DB: 14, Key: "mg:score:leaderboard:2048"}.PreviewURL(),
		url.Values{"_csrf": {tok}, "kind": {"remove-leaderboard-entry"}, "arg.member": {"ana"}})
	if code != http.StatusOK {
		t.Fatalf("preview: %d %.300s", code, body)
	}
	doc, _ := goquery.NewDocumentFromReader(strings.NewReader(body))
	texts := doc.Find(`[data-testid="change-text"]`)
	if texts.Length() < 2 {
		t.Fatalf("%d change texts, want one per key", texts.Length())
	}
	all := doc.Find(`[data-testid="confirm"]`).Text()
	texts.Each(func(_ int, s *goquery.Selection) {
		if n := strings.Count(all, s.Text()); n != 1 {
			t.Errorf("%q is said %d times", s.Text(), n)
		}
	})
}
