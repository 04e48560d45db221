package views_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/keydeck/keydeck/views"
)

func decodedDoc(t *testing.T, vm views.DecodedVM) *goquery.Document {
	t.Helper()
	var b strings.Builder
	if err := views.DecodedPanel(vm).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// The decoded panel: nothing without a role; only its note when withheld,
// even if the model carried figures; rows as text, never markup.
func TestDecodedPanel(t *testing.T) {
	if d := decodedDoc(t, views.DecodedVM{Summary: "x"}); d.Find(`[data-testid="key-decoded"]`).Length() != 0 {
		t.Fatal("a panel without a role")
	}
	d := decodedDoc(t, views.DecodedVM{Role: "token-bucket", Withheld: true, Summary: "3 of 12", Rows: []views.DecodedRow{{Label: "Tokens", Value: "3"}}})
	if d.Find(`[data-testid="decoded-withheld"]`).Length() != 1 || d.Find(`[data-testid="decoded-row"]`).Length() != 0 || strings.Contains(d.Text(), "3 of 12") {
		t.Fatalf("withheld: %q", d.Text())
	}
	d = decodedDoc(t, views.DecodedVM{Role: "lock", Summary: "Held by <b>x</b>", Rows: []views.DecodedRow{{Label: "Holder value", Value: "<b>x</b>"}}})
	if d.Find("b").Length() != 0 || !strings.Contains(d.Find(`[data-testid="decoded-row"]`).Text(), "<b>x</b>") {
		t.Fatalf("markup in a row: %q", d.Text())
	}
}

// A linked row and the members list: the href is the URL as built (a key
// with bytes that are not UTF-8, markup and quotes, query-escaped, comes
// back byte-exact from the attribute), names are text, flags shown.
func TestDecodedPanelLinks(t *testing.T) {
	key := "q:reserved:req_\xff<i>&\"x\" y"
	href := "/c/gw/db/0/key?k=" + url.QueryEscape(key)
	d := decodedDoc(t, views.DecodedVM{Role: "concurrency-set", Summary: "2 in flight",
		Rows:         []views.DecodedRow{{Label: "Live leaderboard", Value: "open", Href: href}},
		MembersTitle: "In-flight request ids",
		Members: []views.DecodedMember{
			{Name: views.EscapeName("req_\xff<i>"), Href: href},
			{Name: "req_crashed", Flag: "no reservation"},
		}})
	if h := d.Find(`[data-testid="decoded-link"]`).AttrOr("href", ""); h != href {
		t.Fatalf("row href %q, want %q", h, href)
	}
	links := d.Find(`[data-testid="decoded-member"] a`)
	if links.Length() != 1 || links.AttrOr("href", "") != href || d.Find("i").Length() != 0 {
		t.Fatalf("member links: %d, %q", links.Length(), links.AttrOr("href", ""))
	}
	u, err := url.Parse(links.AttrOr("href", ""))
	if err != nil || u.Query().Get("k") != key {
		t.Fatalf("the link does not carry the key byte-exact: %v %q", err, u.Query().Get("k"))
	}
	if !strings.Contains(links.Text(), `req_\xff<i>`) || d.Find(`[data-testid="decoded-member-flag"]`).Text() != "no reservation" {
		t.Fatalf("members: %q", d.Find(`[data-testid="decoded-members"]`).Text())
	}
	// Withheld shows no members either.
	d = decodedDoc(t, views.DecodedVM{Role: "concurrency-set", Withheld: true, Members: []views.DecodedMember{{Name: "secret-id"}}})
	if strings.Contains(d.Text(), "secret-id") {
		t.Fatal("withheld panel shows members")
	}
}
