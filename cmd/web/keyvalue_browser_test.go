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

// On the demo, a person narrows a leaderboard's raw value to a score
// window with the form, looks a member up and follows the link to the
// rank page that holds it; a malformed bound is a 400 that says why.
func TestBrowserKeyValueWindowAndLookup(t *testing.T) {
	t.Parallel()
	base := startConsole(t, Config{Addr: "127.0.0.1:0", PollInterval: 300 * time.Millisecond, LogFormat: "text", LogLevel: "info"})
	ctx := redistest.Browser(t)
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	errs := consoleErrors(ctx)
	page := base + "/c/eisland/db/14/key?k=mg%3Ascore%3Aleaderboard%3A2048"

	must(t, chromedp.Do(ctx, chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS(`[data-testid="value-score"]`))))
	enc, err := chromedp.Run(ctx, pollText(`[data-testid="value-encoding"]`))
	must(t, err)
	if enc != "encoding: skiplist" && enc != "encoding: listpack" {
		t.Fatalf("encoding line %q", enc)
	}
	// The form is in the live value panel, which the demo's traffic swaps
	// every few ticks: fill and submit it in one evaluation, as a node
	// found by one call may be gone by the next.
	fill := func(fields map[string]string, submit string) chromedp.Action[chromedp.Void] {
		js := "(() => {"
		for id, v := range fields {
			js += fmt.Sprintf("document.querySelector(%q).value = %q;", id, v)
		}
		js += fmt.Sprintf("document.querySelector(%q).form.requestSubmit(); return true; })()", submit)
		return func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
			_, err := chromedp.Evaluate[bool](js)(ctx, tg)
			return chromedp.Void{}, err
		}
	}
	must(t, chromedp.Do(ctx,
		fill(map[string]string{"#value-min": "(1000", "#value-max": "+inf"}, "#value-min"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="value-window"]`))))
	// Read in the evaluation that finds it: the live panel may be swapped
	// between a wait and a read (seen as an empty note under load).
	note, err := chromedp.Run(ctx, pollText(`[data-testid="value-window"]`))
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
	member, err := chromedp.Run(ctx, pollText(`[data-testid="value-row"]:nth-child(5) td:nth-child(2)`))
	must(t, err)
	must(t, chromedp.Do(ctx,
		fill(map[string]string{"#value-m": member}, "#value-m"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="value-lookup-result"]`))))
	// The live panel may be swapped between the wait and the read (the
	// demo's traffic moves this board): the result is read in the same
	// evaluation that finds it with text.
	res, err := chromedp.Run(ctx, chromedp.Poll[string](`(() => {
		const r = document.querySelector('[data-testid="value-lookup-result"]');
		const t = r ? r.textContent : '';
		return t.trim() !== '' ? t : false;
	})()`))
	must(t, err)
	if !strings.Contains(res, "“"+member+"”: score") || !strings.Contains(res, "rank") {
		t.Fatalf("lookup of %q: %q", member, res)
	}
	// The link is read in the evaluation that finds it (the panel may be
	// swapped between a query and a click: "Could not find node"), then
	// followed.
	href, err := chromedp.Run(ctx, chromedp.Poll[string](`(() => {
		const a = document.querySelector('[data-testid="value-lookup-page"]');
		return a ? a.getAttribute('href') : false;
	})()`))
	must(t, err)
	must(t, chromedp.Do(ctx, chromedp.Navigate(base+href), chromedp.WaitVisible(chromedp.CSS(`[data-testid="value-rows"]`))))
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

// What a person types in the key page's value forms survives the live
// swaps of the value panel: a field being typed into keeps its text and
// its focus when a write from outside pushes a new fragment.
func TestBrowserTypingSurvivesLiveSwaps(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	bg := context.Background()
	db := rs.Client(0)
	db.HSet(bg, "h", "a", "1")
	base := startConsole(t, Config{Addr: "127.0.0.1:0", PollInterval: 200 * time.Millisecond, LogFormat: "text", LogLevel: "info",
		Conns: []redisview.ConnConfig{{Name: "local", URL: rs.URL(0)}}, Sweep: stats.DefaultSweepBudget})
	ctx := redistest.Browser(t)
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	errs := consoleErrors(ctx)
	must(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/c/local/db/0/key?k=h"),
		chromedp.WaitVisible(chromedp.CSS(`#value-filter`)),
		chromedp.SendKeys(chromedp.CSS(`#value-filter`), "ab"),
	))
	db.HSet(bg, "h", "b", "2") // a new fragment arrives while the box holds "ab"
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelectorAll('[data-testid="value-row"]').length === 2`)); err != nil {
		t.Fatalf("the new field never arrived: %v", err)
	}
	state, err := chromedp.Run(ctx, chromedp.Evaluate[[]any](`[document.querySelector('#value-filter').value, document.activeElement && document.activeElement.id]`))
	must(t, err)
	if state[0] != "ab" || state[1] != "value-filter" {
		t.Fatalf("after the swap the filter box holds %q and the focus is on %q; want \"ab\", focused", state[0], state[1])
	}
	if e := errs(); len(e) > 0 {
		t.Fatalf("browser console errors: %v", e)
	}
}

// pollText is the first non-blank text of the node sel finds, read in the
// evaluation that finds it: the live value panel may be swapped between a
// wait and a read (seen as an empty note, or a node gone, under load).
func pollText(sel string) chromedp.Action[string] {
	return chromedp.Poll[string](fmt.Sprintf(`(() => {
		const n = document.querySelector(%q);
		const t = n ? n.innerText : '';
		return t.trim() !== '' ? t : false;
	})()`, sel))
}
