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
	"github.com/keydeck/keydeck/redisview/bulk"
	"github.com/keydeck/keydeck/redisview/stats"
)

// An admin deletes every key of a family from its key list: the count
// arrives live, the confirmation acts, the progress bar fills live over
// the websocket, and the undo, confirmed on its own page, brings every
// key back with its TTL.
func TestBrowserBulkDeleteAndUndo(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	bg := context.Background()
	const n = 1500
	p := rs.Client(0).Pipeline()
	for i := range n {
		p.Set(bg, fmt.Sprintf("server:service-status::api%d", i), "on", 4*time.Minute)
	}
	if _, err := p.Exec(bg); err != nil {
		t.Fatal(err)
	}
	// 500 keys a second: the job takes three seconds, long enough for the
	// bar to be seen part full.
	base := startConsole(t, Config{Addr: "127.0.0.1:0", PollInterval: 200 * time.Millisecond, LogFormat: "text", LogLevel: "info",
		Conns: []redisview.ConnConfig{{Name: "eisland", URL: rs.URL(0)}}, PackFor: map[string]string{"eisland": "eisland"},
		Sweep: stats.DefaultSweepBudget, Bulk: bulk.Options{Rate: 500, Batch: 50, UndoKeys: 10000, UndoBytes: 64 << 20}})
	ctx := redistest.Browser(t)
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	errs := consoleErrors(ctx)
	click := func(sel string) chromedp.Action[chromedp.Void] { return chromedp.Click(chromedp.CSS(sel)) }
	// follow waits for the live fragment's link to the page drawn in the
	// job's new state (its controls), read in the evaluation that finds
	// it, and follows it.
	follow := func() {
		t.Helper()
		href, err := chromedp.Run(ctx, chromedp.Poll[string](`(() => {
			const a = document.querySelector('[data-testid="bulk-reload"]'); return a ? a.getAttribute('href') : false; })()`))
		must(t, err)
		must(t, chromedp.Do(ctx, chromedp.Navigate(base+href), chromedp.WaitVisible(chromedp.CSS(`[data-testid="bulk-live"]`))))
	}
	// counted waits for the count to arrive live, then shows the page
	// with the confirmation.
	counted := func() {
		t.Helper()
		must(t, chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`[data-testid="bulk-live"]`))))
		if n, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('[data-testid="bulk-start"]').length`)); n == 0 {
			follow()
		}
		must(t, chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`[data-testid="bulk-start"]`))))
	}

	must(t, chromedp.Do(ctx, chromedp.Navigate(base+"/c/eisland/db/0/keys?family=service-status"),
		click(`[data-testid="bulk-delete"] button`)))
	counted()
	count, err := chromedp.Run(ctx, pollText(`[data-testid="bulk-count"]`))
	must(t, err)
	if !strings.Contains(count, "1,500 keys counted") {
		t.Fatalf("count %q", count)
	}
	must(t, chromedp.Do(ctx, click(`[data-testid="bulk-start"]`), chromedp.WaitNotPresent(chromedp.CSS(`[data-testid="bulk-start"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="bulk-live"]`))))
	// The bar, part full: pushed over the websocket while the job runs.
	part, err := chromedp.Run(ctx, chromedp.Poll[int](`(() => {
		const p = document.querySelector('[data-testid="bulk-progress"]');
		const v = p ? Number(p.getAttribute('value')) : 0;
		return v > 0 && v < Number(p.getAttribute('max')) ? v : false; })()`))
	must(t, err)
	full, err := chromedp.Run(ctx, chromedp.Poll[int](`(() => {
		const l = document.querySelector('[data-testid="bulk-live"]');
		const p = document.querySelector('[data-testid="bulk-progress"]');
		return l && l.dataset.status === 'done' && p ? Number(p.getAttribute('value')) : false; })()`))
	must(t, err)
	if part <= 0 || full != n {
		t.Fatalf("progress seen %d, then %d", part, full)
	}
	// The page was drawn running, with Cancel: the update that says done
	// takes it away.
	if n, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('[data-testid="bulk-cancel"]').length`)); n != 0 {
		t.Fatal("the finished job's page still offers Cancel")
	}
	if left := rs.Client(0).DBSize(bg).Val(); left != 0 {
		t.Fatalf("%d keys left", left)
	}
	screenshot(t, ctx, "bulk-done.png")

	follow()
	must(t, chromedp.Do(ctx, click(`[data-testid="bulk-undo"]`), chromedp.WaitNotPresent(chromedp.CSS(`[data-testid="bulk-undo"]`))))
	counted()
	must(t, chromedp.Do(ctx, click(`[data-testid="bulk-start"]`), chromedp.WaitNotPresent(chromedp.CSS(`[data-testid="bulk-start"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="bulk-live"]`))))
	_, err = chromedp.Run(ctx, chromedp.Poll[bool](`(() => { const l = document.querySelector('[data-testid="bulk-live"]'); return !!l && l.dataset.status === 'done'; })()`))
	must(t, err)
	if got := rs.Client(0).DBSize(bg).Val(); got != n {
		t.Fatalf("%d keys after the undo", got)
	}
	if ttl := rs.Client(0).PTTL(bg, "server:service-status::api9").Val(); ttl <= 3*time.Minute || ttl > 4*time.Minute {
		t.Fatalf("TTL after the undo %v", ttl)
	}
	if e := errs(); len(e) > 0 {
		t.Fatalf("browser console errors: %v", e)
	}
}
