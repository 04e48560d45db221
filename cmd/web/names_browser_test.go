package main

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/stats"
)

// A leaderboard with a member that is not UTF-8 stays live: its frames used
// to carry the raw byte, Chromium dropped them ("Could not decode a text
// frame as UTF-8") and a new top score never appeared.
func TestBrowserInvalidUTF8LeaderboardStaysLive(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	bg := context.Background()
	db := rs.Client(14)
	const key = "mg:score:leaderboard:2048"
	for i := range 10 {
		db.ZAdd(bg, key, redis.Z{Score: float64(1000 - i*10), Member: fmt.Sprintf("player%02d", i)})
	}
	db.ZAdd(bg, key, redis.Z{Score: 995, Member: "bad\xff"})
	db.ZAdd(bg, key, redis.Z{Score: 1, Member: "long:" + strings.Repeat("é", 2000)})
	base := startConsole(t, Config{Addr: "127.0.0.1:0", PollInterval: 200 * time.Millisecond, LogFormat: "text", LogLevel: "info",
		Conns: []redisview.ConnConfig{{Name: "eisland", URL: rs.URL(0)}}, PackFor: map[string]string{"eisland": "eisland"}, Sweep: stats.DefaultSweepBudget})
	ctx := redistest.Browser(t)
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	errs := consoleErrors(ctx)

	must(t, chromedp.Do(ctx, chromedp.Navigate(base+"/c/eisland/db/14/leaderboard?k="+url.QueryEscape(key)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="lb-row"]`))))
	members, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('[data-testid="lb-member"]')].map(e => e.textContent)`))
	must(t, err)
	if len(members) < 2 || members[1] != `bad\xff` {
		t.Fatalf("members = %q, want the second shown as bad\\xff", members)
	}
	last := members[len(members)-1]
	if !strings.HasPrefix(last, "long:éé") || !strings.HasSuffix(last, "… (4,005 bytes)") || len([]rune(last)) > 150 {
		t.Fatalf("long member shown as %q", last)
	}
	must(t, chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`(window.__noReload = true, undefined)`)))

	db.ZAdd(bg, key, redis.Z{Score: 99999, Member: "champion"})
	_, err = chromedp.Run(ctx, chromedp.Poll[bool](`(() => {
		const m = document.querySelector('[data-testid="lb-row"] [data-testid="lb-member"]');
		return m !== null && m.textContent === 'champion';
	})()`, chromedp.WithPollingTimeout(15*time.Second)))
	if err != nil {
		t.Fatalf("the new top score did not arrive over the websocket: %v; console: %v", err, errs())
	}
	// The copy button's script runs under the CSP: it copies, or (no
	// clipboard permission headless) selects the name for Ctrl+C.
	must(t, chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-copy-name]`))))
	_, err = chromedp.Run(ctx, chromedp.Poll[bool](`['Copied', 'Selected: press Ctrl+C'].includes(document.querySelector('[data-copy-name]').textContent)`,
		chromedp.WithPollingTimeout(5*time.Second)))
	must(t, err)
	state, err := chromedp.Run(ctx, chromedp.Evaluate[[]any](`[window.__noReload === true, document.querySelector('[data-testid="lb-key"]').textContent]`))
	must(t, err)
	if state[0] != true || state[1] != key {
		t.Fatalf("noReload, title = %v", state)
	}
	screenshot(t, ctx, "leaderboard-names.png")
	if e := errs(); len(e) > 0 {
		t.Fatalf("browser console errors: %v", e)
	}
}

// A database holding a 1 MB key name and names that are not UTF-8 or hide
// characters: the page stays small, shows them cut and escaped, and stays
// live.
func TestBrowserHostileNamesOnDatabasePage(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	bg := context.Background()
	db := rs.Client(6)
	huge := "huge:" + strings.Repeat("x", 1<<20)
	for _, k := range []string{huge, "bad\xff:key", "evil:\u202etxt.exe", "tab:\there", `win:C:\temp`, "fine:key"} {
		db.Set(bg, k, "v", 0)
	}
	base := startConsole(t, Config{Addr: "127.0.0.1:0", PollInterval: 200 * time.Millisecond, LogFormat: "text", LogLevel: "info",
		Conns: []redisview.ConnConfig{{Name: "eisland", URL: rs.URL(0)}}, PackFor: map[string]string{"eisland": "eisland"}, Sweep: stats.DefaultSweepBudget})
	ctx := redistest.Browser(t)
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	errs := consoleErrors(ctx)

	must(t, chromedp.Do(ctx, chromedp.Navigate(base+"/c/eisland/db/6"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="name-cut"]`))))
	must(t, chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`(window.__noReload = true, undefined)`)))
	db.Set(bg, "fresh:key", "v", 0)
	_, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById('db-live').textContent.includes('fresh:key')`, chromedp.WithPollingTimeout(15*time.Second)))
	if err != nil {
		t.Fatalf("a new key did not arrive over the websocket: %v; console: %v", err, errs())
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[[]any](`[window.__noReload === true, document.documentElement.outerHTML.length,
		document.getElementById('db-live').textContent]`))
	must(t, err)
	text, _ := got[2].(string)
	if got[0] != true {
		t.Fatal("the page reloaded")
	}
	if n, _ := got[1].(float64); n > 64<<10 {
		t.Fatalf("the page holds %.0f characters of HTML", n)
	}
	for _, want := range []string{`bad\xff:key`, `evil:\u202etxt.exe`, `tab:\there`, `win:C:\\temp`, "… (1,048,581 bytes)", "not linked"} {
		if !strings.Contains(text, want) {
			t.Errorf("the page does not show %q", want)
		}
	}
	screenshot(t, ctx, "database-names.png")
	if e := errs(); len(e) > 0 {
		t.Fatalf("browser console errors: %v", e)
	}
}
