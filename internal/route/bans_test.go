package route_test

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/keydeck/keydeck/internal/route"
)

func TestBansQueryRoundTrip(t *testing.T) {
	for _, q := range []route.BansQuery{
		{Conn: "eisland"},
		{Conn: "eisland", Check: "韩梅梅"},
		{Conn: "eisland", Check: "bad\xff<b>&amp;</b> ops:x", List: "user-ban-bloom", Filter: "*?[x]", Cursor: 18446744073709551615},
		{Conn: "eisland", Check: strings.Repeat("界", 342), Cursor: 7},
	} {
		u, err := url.Parse(q.URL())
		if err != nil {
			t.Fatal(err)
		}
		if u.Path != "/c/eisland/bans" {
			t.Fatalf("path %q", u.Path)
		}
		got, err := route.ParseBansQuery("eisland", u.Query())
		if err != nil || got != q {
			t.Fatalf("%+v → %q → %+v, %v", q, q.URL(), got, err)
		}
	}
	if route.BanCheckURL("c", "a b&c") != (route.BansQuery{Conn: "c", Check: "a b&c"}).URL() {
		t.Fatalf("BanCheckURL %q and BansQuery.URL %q differ", route.BanCheckURL("c", "a b&c"), (route.BansQuery{Conn: "c", Check: "a b&c"}).URL())
	}
	for _, bad := range []url.Values{
		{"cursor": {"x"}},
		{"cursor": {"-1"}},
		{"check": {strings.Repeat("a", route.MaxCheckName+1)}},
		{"list": {strings.Repeat("a", 201)}},
	} {
		if _, err := route.ParseBansQuery("c", bad); !errors.Is(err, route.ErrParam) {
			t.Errorf("%v: %v, want route.ErrParam", bad, err)
		}
	}
}
