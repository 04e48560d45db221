package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/keydeck/keydeck/internal/redistest"
)

// On the demo, a person narrows a leaderboard's raw value to a score
// window with the form, looks a member up and follows the link to the
// rank page that holds it; a malformed bound is a 400 that says why.
func TestBrowserKeyValueWindowAndLookup(t *testing.T) {
	base := startConsole(t, Config{Addr: "127.0.0.1:0", PollInterval: 300 * time.Millisecond, LogFormat: "text", LogLevel: "info"})
	ctx := redistest.Browser(t)
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	errs := consoleErrors(ctx)
	page := base + "/c/eisland/db/14/key?k=mg%3Ascore%3Aleaderboard%3A2048"

	must(t, chromedp.Do(ctx, chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS(`[data-testid="value-score"]`))))
	enc, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[data-testid="value-encoding"]`)))
	must(t, err)
	if enc != "encoding: skiplist" && enc != "encoding: listpack" {
		t.Fatalf("encoding line %q", enc)
	}
	must(t, chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS(`#value-min`), "(1000"),
		chromedp.SendKeys(chromedp.CSS(`#value-max`), "+inf"),
		chromedp.Submit(chromedp.CSS(`#value-min`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="value-window"]`))))
	note, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[data-testid="value-window"]`)))
	must(t, err)
	if !strings.Contains(note, "Score window (1000 … +inf") {
		t.Fatalf("window note %q", note)
	}
	// Every row shown is inside the window.
	inside, err := chromedp.Run(ctx, chromedp.Poll[bool](`(() => {
		const rows = [...document.querySelectorAll('[data-testid="value-row"]')];
		return rows.length > 0 && rows.every(r => parseFloat(r.children[2].textContent.replace(/,/g, '')) > 1000);
	})()`))
	must(t, err)
	if !inside {
		t.Fatal("a row outside the score window")
	}

	must(t, chromedp.Do(ctx, chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS(`[data-testid="value-lookup"]`))))
	member, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[data-testid="value-row"]:nth-child(5) td:nth-child(2)`)))
	must(t, err)
	must(t, chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS(`#value-m`), member),
		chromedp.Submit(chromedp.CSS(`#value-m`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="value-lookup-result"]`))))
	res, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[data-testid="value-lookup-result"]`)))
	must(t, err)
	if !strings.Contains(res, "“"+member+"”: score") || !strings.Contains(res, "rank") {
		t.Fatalf("lookup of %q: %q", member, res)
	}
	must(t, chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="value-lookup-page"]`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid="value-rows"]`))))
	found, err := chromedp.Run(ctx, chromedp.Poll[bool](`[...document.querySelectorAll('[data-testid="value-row"] td:nth-child(2)')].some(td => td.textContent.trim() === `+jsString(member)+`)`))
	must(t, err)
	if !found {
		t.Fatalf("%q is not on the page its lookup links to", member)
	}

	if e := errs(); len(e) > 0 {
		t.Fatalf("browser console errors: %v", e)
	}
	// (The 400 below is logged by the browser as a failed load.)
	must(t, chromedp.Do(ctx, chromedp.Navigate(page+"&min=abc"), chromedp.WaitVisible(chromedp.CSS(`body`))))
	body, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`body`)))
	must(t, err)
	if !strings.Contains(body, "400") || !strings.Contains(body, `"abc" is not a score`) {
		t.Fatalf("malformed bound: %.300q", body)
	}
}

func jsString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}
