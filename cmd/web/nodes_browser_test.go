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
)

// The overview of a cluster lists every node with its role in the open
// page, follows writes over the websocket, names a killed primary and then
// the replica that took over, without a reload and without restarting
// Keydeck.
func TestBrowserClusterOverview(t *testing.T) {
	t.Parallel()
	cl := redistest.StartCluster(t)
	cl.Fill("k:", 300)
	audit := redistest.Start(t) // a cluster cannot hold the audit log
	base := startConsole(t, Config{Addr: "127.0.0.1:0", PollInterval: 300 * time.Millisecond, LogFormat: "text", LogLevel: "info",
		Conns: []redisview.ConnConfig{{Name: "main", URL: cl.URL()}, {Name: "audit", URL: audit.URL(0)}}, Audit: "audit/15"})

	ctx := redistest.Browser(t)
	ctx, cancel := context.WithTimeout(ctx, 120*time.Second)
	defer cancel()
	errs := consoleErrors(ctx)
	poll := func(what, js string) {
		t.Helper()
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](js)); err != nil {
			page, _ := liveText(ctx, `#overview-live`)
			t.Fatalf("%s: %v\npage: %s", what, err, page)
		}
	}

	must(t, chromedp.Do(ctx, chromedp.Navigate(base+"/c/main")))
	poll("six nodes listed, three primaries", `document.querySelectorAll('[data-testid="node"]').length === 6 &&
		document.querySelectorAll('[data-testid="node"][data-role="primary"]').length === 3`)
	poll("300 keys counted over the primaries", `document.querySelector('[data-testid="total-keys"]')?.textContent === "300"`)
	if v, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(window.__noReload = true)`)); err != nil || !v {
		t.Fatal(err)
	}
	for _, s := range cl.Primaries() {
		poll("primary "+s.Addr+" listed", fmt.Sprintf(`document.querySelector('[data-testid="node"][data-addr=%q]')?.dataset.role === "primary"`, s.Addr))
	}

	// A write from outside arrives over the websocket.
	cl.Fill("more:", 20)
	poll("320 keys after a write", `document.querySelector('[data-testid="total-keys"]')?.textContent === "320"`)
	screenshot(t, ctx, "nodes-before.png")

	dead := cl.Primaries()[0]
	replica, err := liveText(ctx, fmt.Sprintf(`[data-testid="node"][data-role="replica of %s"] [data-testid="node-addr"]`, dead.Addr))
	must(t, err)
	replica = strings.TrimSpace(replica)
	dead.Stop()
	poll("the killed primary is named failing", fmt.Sprintf(`[...document.querySelectorAll('[data-testid="failing-node"]')].some(e => e.textContent.includes(%q))`, dead.Addr))
	screenshot(t, ctx, "nodes-during.png")
	cl.WaitFailover(dead, 60*time.Second)
	poll("the replica "+replica+" is primary", fmt.Sprintf(`document.querySelector('[data-testid="node"][data-addr=%q]')?.dataset.role === "primary"`, replica))
	poll("every key counted again", `document.querySelector('[data-testid="total-keys"]')?.textContent === "320"`)
	screenshot(t, ctx, "nodes-after.png")
	if v, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.__noReload === true`)); err != nil || !v {
		t.Fatalf("the page reloaded: %v", err)
	}
	if e := errs(); len(e) > 0 {
		t.Fatalf("browser console errors: %v", e)
	}
}
