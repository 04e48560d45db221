package route_test

import (
	"net/url"
	"testing"

	"github.com/keydeck/keydeck/internal/route"
)

// A page of a family's rows survives its link byte for byte; a broken
// offset is the first page.
func TestRowsPageRoundTrip(t *testing.T) {
	for _, p := range []route.RowsPage{
		{},
		{Filter: " Zo\xff&x=1#%20 "},
		{Filter: "eve", Fam: "login-failures", DB: 6, Off: 10},
		{Filter: "\x00q=a&off=3", Fam: "lock-create-pro-month", DB: 10, Off: 40},
	} {
		u, err := url.Parse(p.URL(route.LocksURL("main")))
		if err != nil {
			t.Fatal(err)
		}
		if got := route.ParseRowsPage(u.Query()); got != p {
			t.Errorf("%+v came back as %+v from %s", p, got, u)
		}
		if p.Fam != "" && u.Fragment != route.FamilyAnchor(p.Fam, p.DB) {
			t.Errorf("%+v: fragment %q", p, u.Fragment)
		}
	}
	for _, q := range []string{"fam=x&db=1&off=-10", "fam=x&db=1&off=ten", "fam=x&db=256&off=10", "db=1&off=10", "fam=x&off=10"} {
		v, _ := url.ParseQuery(q)
		if got := route.ParseRowsPage(v); got.Off != 0 || got.Fam != "" {
			t.Errorf("%s: %+v, want the first page", q, got)
		}
	}
}
