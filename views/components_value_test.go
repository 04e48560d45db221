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

// A sorted set's forms keep the window's state in hidden inputs; a lookup
// answer and a member given as markup render as text.
func TestValuePanelSortedSetForms(t *testing.T) {
	d := render(t, ValuePanel(ValueVM{Type: "zset", Length: "3 members", Encoding: "encoding: skiplist",
		Columns: []ValueColumn{{Name: "Rank"}}, Rows: [][]ValueCell{{{Text: "0"}}},
		FormAction: "/c/x/db/0/key", FormKey: "board", Jumpable: true, JumpLabel: "Go to offset in window",
		JumpHidden: []ValueHidden{{Name: "min", Value: "(1"}, {Name: "max", Value: "+inf"}},
		ScoreForm:  true, Min: "(1", Max: "+inf", LookupForm: true, Member: "<b>m</b>",
		Lookup: &ValueLookup{Found: true, Text: "“<b>m</b>”: score 2", Href: "/c/x/db/0/key?k=board&at=0"},
		Last:   "/last"}))
	if got := d.Find(`[data-testid="value-encoding"]`).Text(); got != "encoding: skiplist" {
		t.Fatalf("encoding %q", got)
	}
	if v, _ := d.Find(`form[data-testid="value-jump"] input[name="min"]`).Attr("value"); v != "(1" {
		t.Fatalf("jump form min %q", v)
	}
	if v, _ := d.Find(`#value-m`).Attr("value"); v != "<b>m</b>" || d.Find("b").Length() != 0 {
		t.Fatal("member rendered as markup")
	}
	if h, _ := d.Find(`[data-testid="value-lookup-page"]`).Attr("href"); h != "/c/x/db/0/key?k=board&at=0" {
		t.Fatalf("lookup link %q", h)
	}
	if h, _ := d.Find(`[data-testid="value-last"]`).Attr("href"); h != "/last" {
		t.Fatalf("last %q", h)
	}
}
