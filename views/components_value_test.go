package views

import (
	"strings"
	"testing"
)

// A withheld value shows the note and nothing else: no rows, no text, no
// paging, whatever the model carries by mistake.
func TestValuePanelWithheldShowsNothing(t *testing.T) {
	d := render(t, ValuePanel(ValueVM{Withheld: true, Text: "SECRET", Rows: [][]ValueCell{{{Text: "SECRET"}}}, Next: "/next"}))
	if d.Find(`[data-testid="value-withheld"]`).Length() != 1 || strings.Contains(d.Text(), "SECRET") || d.Find(`[data-testid="value-next"]`).Length() != 0 {
		t.Fatalf("withheld panel: %q", d.Text())
	}
}

// Rows show their text as text, a cut part with its note, and the paging
// links that the model gives.
func TestValuePanelRowsAndPaging(t *testing.T) {
	d := render(t, ValuePanel(ValueVM{Type: "hash", Length: "2 fields",
		Columns: []ValueColumn{{Name: "Field"}, {Name: "Value"}},
		Rows:    [][]ValueCell{{{Text: "<img src=x>"}, {Text: "yyy…", Note: "3 of 5,000 bytes shown"}}},
		Prev:    "/p?at=1", Next: "/p?at=9"}))
	if d.Find("img").Length() != 0 || !strings.Contains(d.Find(`[data-testid="value-row"]`).Text(), "<img src=x>") {
		t.Fatal("a value rendered as markup")
	}
	if got := d.Find(`[data-testid="value-cut"]`).Text(); got != "3 of 5,000 bytes shown" {
		t.Fatalf("cut note %q", got)
	}
	if p, _ := d.Find(`[data-testid="value-prev"]`).Attr("href"); p != "/p?at=1" {
		t.Fatalf("prev %q", p)
	}
	if n, _ := d.Find(`[data-testid="value-next"]`).Attr("href"); n != "/p?at=9" {
		t.Fatalf("next %q", n)
	}
}
