package route_test

import (
	"net/url"
	"testing"

	"github.com/keydeck/keydeck/internal/route"
)

// The continue link carries the query and the cursors byte-exact.
func TestSearchContinueURL(t *testing.T) {
	q := "Zoë:ops/β&x=1 *\xff"
	u, err := url.Parse(route.SearchContinueURL("eisland", q, "4.0:123,14.0:0"))
	if err != nil {
		t.Fatal(err)
	}
	if u.Path != "/c/eisland/search" || u.Query().Get("q") != q || u.Query().Get("cont") != "4.0:123,14.0:0" {
		t.Fatalf("%s: q %q cont %q", u, u.Query().Get("q"), u.Query().Get("cont"))
	}
}
