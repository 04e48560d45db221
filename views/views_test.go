package views

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

func renderDoc(t *testing.T, vm OverviewVM, oob bool) (*goquery.Document, string) {
	t.Helper()
	var buf bytes.Buffer
	if err := OverviewLive(vm, oob).Render(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(buf.String()))
	if err != nil {
		t.Fatal(err)
	}
	return doc, buf.String()
}

func TestOverviewLiveRendersRowsAndStates(t *testing.T) {
	vm := OverviewVM{
		Conn: "eisland", Display: "redis://127.0.0.1:6379", Connected: true, StatusText: "connected",
		DBs:       []DBRow{{Index: 0, Keys: "21", Expires: "19", AvgTTL: "3m 15s", SharePct: 1}, {Index: 14, Keys: "825", Expires: "821", AvgTTL: "3h", SharePct: 25, Note: "estimated from 12% of keys"}},
		TotalKeys: "846",
	}
	doc, _ := renderDoc(t, vm, false)
	if got := doc.Find(`[data-testid="db-14"] [data-testid="keys"]`).Text(); got != "825" {
		t.Fatalf("db14 keys = %q", got)
	}
	if got := doc.Find(`[data-testid="total-keys"]`).Text(); got != "846" {
		t.Fatalf("total = %q", got)
	}
	if doc.Find(`#overview-live[hx-swap-oob]`).Length() != 0 {
		t.Fatal("page render must not be an OOB swap")
	}
	doc, _ = renderDoc(t, vm, true)
	if doc.Find(`#overview-live[hx-swap-oob="true"]`).Length() != 1 {
		t.Fatal("fragment render must be an OOB swap")
	}

	empty := vm
	empty.DBs = nil
	if doc, _ = renderDoc(t, empty, false); doc.Find(`[data-testid="no-keys"]`).Length() != 1 {
		t.Fatal("empty server has no empty state")
	}
	down := vm
	down.Connected, down.StatusText, down.StatusErr = false, "disconnected since 10:00:00 UTC", "connection refused"
	doc, _ = renderDoc(t, down, false)
	if doc.Find(`[data-testid="disconnected"]`).Length() != 1 || doc.Find(`[data-testid="db-0"]`).Length() != 0 {
		t.Fatal("disconnected state not rendered, or stale rows shown")
	}
}

// Connection names, URLs and error texts can carry attacker-chosen bytes;
// templ escapes them.
func TestOverviewLiveEscapes(t *testing.T) {
	evil := `<script>alert(1)</script>"'&`
	vm := OverviewVM{Conn: "x", Display: evil, Connected: true, StatusText: "connected", ReadErr: evil, Unavailable: []string{evil}}
	doc, html := renderDoc(t, vm, true)
	if strings.Contains(html, "<script>") {
		t.Fatal("unescaped script tag in output")
	}
	if got := doc.Find(`[data-testid="display-url"]`).Text(); got != evil {
		t.Fatalf("display text = %q, want the raw string shown as text", got)
	}
}
