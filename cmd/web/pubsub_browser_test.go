package main

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
)

// A watch started from the Pub/Sub page's form shows a message published
// afterwards, over the websocket, without a reload; a payload byte that
// is not UTF-8 shows escaped.
func TestBrowserPubSubWatch(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	base := startConsole(t, Config{Addr: "127.0.0.1:0", PollInterval: 200 * time.Millisecond, LogFormat: "text", LogLevel: "info",
		Conns: []redisview.ConnConfig{{Name: "main", URL: rs.URL(0)}}})
	ctx := redistest.Browser(t)
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	errs := consoleErrors(ctx)

	must(t, chromedp.Do(ctx, chromedp.Navigate(base+"/c/main/pubsub"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="watch-form"]`)),
		chromedp.SetValue(chromedp.CSS(`[data-testid="watch-name"]`), "alerts"),
		chromedp.Click(chromedp.CSS(`[data-testid="watch-start"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="watch-empty"]`)),
		chromedp.Evaluate[chromedp.Void](`(window.__noReload = true, undefined)`)))
	pub := rs.Client(0)
	defer pub.Close()
	// The watch subscribes when its topic's poller starts: publish once it has.
	redistest.Eventually(t, 10*time.Second, "the watch subscribed", func() bool {
		n, _ := pub.PubSubNumSub(context.Background(), "alerts").Result()
		return n["alerts"] == 1
	})
	pub.Publish(context.Background(), "alerts", "disk full \xff")
	_, err := chromedp.Run(ctx, chromedp.Poll[bool](`(() => {
		const m = document.querySelector('[data-testid="message-payload"]');
		return m !== null && m.textContent.trim() === 'disk full \\xff' && window.__noReload === true;
	})()`, chromedp.WithPollingTimeout(15*time.Second)))
	if err != nil {
		page, _ := liveText(ctx, `#watch-live`)
		t.Fatalf("the message did not arrive live: %v; page: %s; console: %v", err, page, errs())
	}
	screenshot(t, ctx, "pubsub-watch.png")
	if e := errs(); len(e) > 0 {
		t.Fatalf("browser console errors: %v", e)
	}
}
