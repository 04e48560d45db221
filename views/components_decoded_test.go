package views_test

import (
	"context"
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
