package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/keydeck/keydeck/internal/route"
)

// A listpack hash of 3,000 fields comes whole from one HSCAN whatever
// COUNT asks: the key page still shows one page of rows, says why, and
// its Next and Prev links (the trail) reach every field exactly once.
func TestKeyPageCapsWholeScanReply(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	ctx := context.Background()
	db := f.redis.Client(0)
	if err := db.ConfigSet(ctx, "hash-max-listpack-entries", "5000").Err(); err != nil {
		t.Fatal(err)
	}
	p := db.Pipeline()
	for i := range 3000 {
		p.HSet(ctx, "wide", fmt.Sprintf("f%04d", i), i)
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	br := newBrowser(t, f.srv.URL)
	br.login("ada", "right-password")
	seen := map[string]int{}
	next := route.KeyURL("main", 0, "wide")
	var second string
	for page := 0; next != ""; page++ {
		if page > 40 {
			t.Fatal("no end after 40 pages")
		}
		code, _, body := br.do(http.MethodGet, next, nil)
		if code != http.StatusOK {
			t.Fatalf("page %d %s: %d %s", page, next, code, valueDoc(t, body).Find("main").Text())
		}
		doc := valueDoc(t, body)
		rows := doc.Find(`[data-testid="value-row"]`)
		if rows.Length() > 100 {
			t.Fatalf("page %d: %d rows", page, rows.Length())
		}
		if page == 0 && !strings.Contains(body, "more than a page at once") {
			t.Errorf("the first page does not say the reply was cut")
		}
		if page == 1 {
			second = rows.First().Find("td").First().Text()
		}
		if page == 2 {
			prev, _ := doc.Find(`[data-testid="value-prev"]`).Attr("href")
			_, _, pb := br.do(http.MethodGet, prev, nil)
			if got := valueDoc(t, pb).Find(`[data-testid="value-row"]`).First().Find("td").First().Text(); got != second {
				t.Errorf("back along the trail from page 3: first row %q, want %q", got, second)
			}
		}
		rows.Each(func(_ int, r *goquery.Selection) { seen[strings.TrimSpace(r.Find("td").First().Text())]++ })
		next, _ = doc.Find(`[data-testid="value-next"]`).Attr("href")
	}
	if len(seen) != 3000 {
		t.Errorf("%d distinct fields reached, want 3000", len(seen))
	}
	for k, n := range seen {
		if n != 1 {
			t.Errorf("field %q shown %d times", k, n)
		}
	}
}
