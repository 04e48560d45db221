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

// The overview charts the keys per family over the last hour of the
// databases swept in this process, from the passes their sweeps kept, and
// says which; before any sweep it says how to start one.
func TestOverviewFamiliesOfSweptDatabases(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	ctx := context.Background()
	for i := range 12 {
		f.redis.Client(0).Set(ctx, fmt.Sprintf("server:service-status::api%d", i), "on", 0)
	}
	f.redis.Client(1).Set(ctx, "server:service-status::other", "on", 0)
	overview := func() *goquery.Document {
		t.Helper()
		code, _, body := get(t, f.srv.URL+route.OverviewURL("main"))
		if code != http.StatusOK {
			t.Fatalf("overview %d", code)
		}
		doc, err := goquery.NewDocumentFromReader(strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		return doc
	}
	doc := overview()
	note := doc.Find(`[data-testid="overview-family-note"]`).Text()
	if !strings.Contains(note, "Open a database to start its sweep") || doc.Find(`[data-testid="overview-family-db"]`).Length() != 0 {
		t.Fatalf("before any sweep: %q, %d charts", note, doc.Find(`[data-testid="overview-family-db"]`).Length())
	}
	if code, _, _ := get(t, f.srv.URL+route.DatabaseURL("main", 0)); code != http.StatusOK {
		t.Fatalf("database page %d", code)
	}
	waitFor(t, "db0's hour on the overview", func() bool {
		doc = overview()
		return doc.Find(`[data-testid="overview-family-db"][data-db="0"] svg[data-testid="chart"]`).Length() == 1
	})
	db0 := doc.Find(`[data-testid="overview-family-db"][data-db="0"]`)
	if legend := db0.Find(`[data-testid="chart"] title`).First().Text(); !strings.Contains(legend, "12") {
		t.Errorf("db0's chart does not say its 12 keys: %q", legend)
	}
	if href, _ := db0.Find("h3 a").Attr("href"); href != route.DatabaseURL("main", 0) {
		t.Errorf("db0's chart links to %q", href)
	}
	if !strings.Contains(db0.Find("h3").Text(), "1 pass") && !strings.Contains(db0.Find("h3").Text(), "passes") {
		t.Errorf("db0's chart does not say what it is drawn from: %q", db0.Find("h3").Text())
	}
	note = doc.Find(`[data-testid="overview-family-note"]`).Text()
	if !strings.Contains(note, "Covers db0:") || strings.Contains(note, "db1") {
		t.Errorf("note %q: want db0 covered, db1 (not opened) not", note)
	}
	if doc.Find(`[data-testid="overview-family-db"][data-db="1"]`).Length() != 0 {
		t.Error("db1, never opened, is charted")
	}
}
