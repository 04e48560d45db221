package views

import (
	"bytes"
	"context"
	"io"
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

func render(t *testing.T, c interface {
	Render(context.Context, io.Writer) error
}) *goquery.Document {
	t.Helper()
	var buf bytes.Buffer
	if err := c.Render(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	doc, err := goquery.NewDocumentFromReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// Every live fragment has its empty and error states.
func TestEmptyAndErrorStates(t *testing.T) {
	if d := render(t, AuditLive(AuditVM{}, true)); d.Find(`[data-testid="audit-empty"]`).Length() != 1 {
		t.Error("audit: no empty state")
	}
	if d := render(t, AuditLive(AuditVM{Err: "connection refused"}, true)); !strings.Contains(d.Text(), "cannot be read: connection refused") {
		t.Error("audit: no error state")
	}
	if d := render(t, LeaderboardLive(LeaderboardVM{Size: "0"}, true)); d.Find(`[data-testid="lb-empty"]`).Length() != 1 {
		t.Error("leaderboard: no empty state")
	}
	if d := render(t, LeaderboardLive(LeaderboardVM{Err: "Cannot read the leaderboard: WRONGTYPE"}, true)); !strings.Contains(d.Text(), "WRONGTYPE") {
		t.Error("leaderboard: no error state")
	}
	d := render(t, DBLive(DBPageVM{Conn: "c", NoPack: "no pack fits", Total: "0"}, true))
	for _, id := range []string{"no-violations"} {
		if d.Find(`[data-testid="`+id+`"]`).Length() != 1 {
			t.Errorf("db page: no %s state", id)
		}
	}
	if !strings.Contains(d.Find(`[data-testid="pack"]`).Text(), "no pack fits") {
		t.Error("db page: does not say why there is no pack")
	}
	if d := render(t, DBLive(DBPageVM{Conn: "c", Err: "NOPERM"}, true)); d.Find(`[data-testid="db-error"]`).Length() != 1 {
		t.Error("db page: no error state")
	}
	if d := render(t, LeaderboardListLive(LeaderboardListVM{Groups: []LeaderboardGroup{{Conn: "x", Note: "No leaderboard keys."}}}, true)); !strings.Contains(d.Text(), "No leaderboard keys.") {
		t.Error("leaderboard list: no empty note")
	}
}

// Moved rows carry their marks and the remove link only when allowed.
func TestLeaderboardRows(t *testing.T) {
	vm := LeaderboardVM{Size: "2", Rows: []LeaderboardRow{
		{Rank: "1", Member: `<b>x</b>`, Score: "10", Move: "new", MoveText: "new", RemoveHref: "/actions/preview?kind=remove"},
		{Rank: "2", Member: "y", Score: "5", Move: "down", MoveText: "▼ 1", RemoveHref: "/actions/preview?kind=remove&m=y"},
	}}
	d := render(t, LeaderboardLive(vm, true))
	if d.Find(`[data-testid="lb-remove"]`).Length() != 0 {
		t.Fatal("remove links without CanRemove")
	}
	if d.Find(`b`).Length() != 0 || d.Find(`[data-move="new"] [data-testid="lb-member"]`).Text() != "<b>x</b>" {
		t.Fatal("member not rendered as inert text")
	}
	vm.CanRemove = true
	if d := render(t, LeaderboardLive(vm, true)); d.Find(`[data-testid="lb-remove"]`).Length() != 2 {
		t.Fatal("remove links missing")
	}
}
