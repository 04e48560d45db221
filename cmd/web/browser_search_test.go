package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/stats"
)

// A username's keys that only a scan finds arrive in the open search page
// by themselves: the page's live topic scans in the background, its
// progress and the key found are swapped in, and it says when it is done.
func TestBrowserSearchScansLive(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	bg := context.Background()
	p := rs.Client(6).Pipeline()
	for i := range 20000 {
		p.Set(bg, fmt.Sprintf("auth:replay:user%d:1:2:3", i), "1", time.Hour)
	}
	p.Set(bg, "auth:replay:alice:7:8:9", "1", time.Hour)
	if _, err := p.Exec(bg); err != nil {
		t.Fatal(err)
	}
	base := startConsole(t, Config{Addr: "127.0.0.1:0", PollInterval: 200 * time.Millisecond, LogFormat: "text", LogLevel: "info",
		Conns: []redisview.ConnConfig{{Name: "eisland", URL: rs.URL(0)}}, PackFor: map[string]string{"eisland": "eisland"}, Sweep: stats.DefaultSweepBudget})
	ctx := redistest.Browser(t)
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	errs := consoleErrors(ctx)
	must(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/c/eisland/search?q=alice"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="search-live-state"][data-state="end"]`)),
	))
	state, err := liveText(ctx, `[data-testid="search-live-state"]`)
	must(t, err)
	if !strings.Contains(state, "Done: every scan reached the end") {
		t.Fatalf("end state %q", state)
	}
	hits, err := liveText(ctx, `[data-testid="search-db-6"]`)
	must(t, err)
	if !strings.Contains(hits, "auth:replay:alice:7:8:9") || !strings.Contains(hits, "scan") {
		t.Fatalf("db6 results lack the scanned key: %q", hits)
	}
	scans, err := liveText(ctx, `[data-testid="search-scans"]`)
	must(t, err)
	if !strings.Contains(scans, "scanned to the end (~20,001 keys") {
		t.Fatalf("scan progress %q", scans)
	}
	screenshot(t, ctx, "search-live.png")
	if e := errs(); len(e) > 0 {
		t.Fatalf("browser console errors: %v", e)
	}
}
