package main

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/redis/go-redis/v9"
	"golang.org/x/crypto/bcrypt"

	"github.com/keydeck/keydeck/internal/demo"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/stats"
)

// startConsole runs the real main loop against cfg and returns its base URL.
func startConsole(t *testing.T, cfg Config) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	errc := make(chan error, 1)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	go func() { errc <- run(ctx, cfg, log, ready) }()
	t.Cleanup(func() {
		cancel()
		if err := <-errc; err != nil {
			t.Errorf("run: %v", err)
		}
	})
	select {
	case addr := <-ready:
		return "http://" + addr
	case err := <-errc:
		errc <- nil // run has returned: the cleanup must not wait for it again
		t.Fatalf("run: %v", err)
	case <-time.After(60 * time.Second): // bounds a failure only: seeding the demo under -race on a busy machine takes a while
		t.Fatal("console did not start")
	}
	return ""
}

// consoleErrors collects the page's console errors, exceptions and browser
// log errors (a CSP violation shows up there).
func consoleErrors(ctx context.Context) func() []string {
	var mu sync.Mutex
	var errs []string
	msgs := chromedp.Console(ctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				mu.Lock()
				errs = append(errs, m.String())
				mu.Unlock()
			}
		}
	}()
	return func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), errs...) }
}

func screenshot(t *testing.T, ctx context.Context, name string) {
	dir := os.Getenv("KEYDECK_SCREENSHOTS")
	if dir == "" {
		return
	}
	buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Logf("screenshot: %v", err)
		return
	}
	_ = os.WriteFile(filepath.Join(dir, name), buf, 0o644)
}

// The overview updates in the open page when Redis changes, shows a Redis
// outage, and resumes by itself when Redis returns.
func TestBrowserOverviewLive(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	bg := context.Background()
	rs.Client(0).Set(bg, "greeting", "hello", 0)
	base := startConsole(t, Config{Addr: "127.0.0.1:0", PollInterval: 200 * time.Millisecond, LogFormat: "text", LogLevel: "info",
		Conns: []redisview.ConnConfig{{Name: "main", URL: rs.URL(0)}}})

	ctx := redistest.Browser(t)
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	errs := consoleErrors(ctx)

	text := func(sel string) string {
		t.Helper()
		v, err := liveText(ctx, sel)
		must(t, err)
		return strings.TrimSpace(v)
	}
	eval := func(js string) bool {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js))
		must(t, err)
		return v
	}
	waitVisible := func(ctx context.Context, sel string) {
		t.Helper()
		must(t, chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(sel))))
	}

	must(t, chromedp.Do(ctx, chromedp.Navigate(base+"/c/main")))
	waitVisible(ctx, `[data-testid="db-0"]`)
	if keys := text(`[data-testid="db-0"] [data-testid="keys"]`); keys != "1" {
		t.Fatalf("db0 keys = %q, want 1", keys)
	}
	// Mark the document so a reload would be noticed.
	eval(`(window.__noReload = true)`)

	// Write from outside; the new database and count arrive over the websocket.
	for i := range 42 {
		rs.Client(9).Set(bg, fmt.Sprintf("user:%d", i), "x", time.Hour)
	}
	// A tick may land between the writes; the count must reach 42.
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelector('[data-testid="db-9"] [data-testid="keys"]')?.textContent === "42"`)); err != nil {
		t.Fatalf("db9 never showed 42 keys (now %q): %v", text(`#overview-live`), err)
	}
	if !eval(`window.__noReload === true`) {
		t.Fatal("the page reloaded; the update should have arrived over the websocket")
	}
	screenshot(t, ctx, "overview.png")

	// Redis goes away: the page says so by itself (the monitor probes every
	// 500 ms; the deadline only bounds a failure, the time it took is logged).
	rs.Stop()
	down := time.Now()
	waitCtx, wcancel := context.WithTimeout(ctx, 20*time.Second)
	waitVisible(waitCtx, `[data-testid="disconnected"]`)
	wcancel()
	t.Logf("the page said disconnected %v after Redis stopped", time.Since(down).Round(time.Millisecond))
	if status := text(`#overview-live [data-testid="status"]`); !strings.Contains(status, "disconnected since") {
		t.Fatalf("status = %q", status)
	}
	screenshot(t, ctx, "overview-down.png")

	// It comes back (empty, as a restarted server without persistence is):
	// the open page resumes without reload.
	rs.Restart()
	rs.Client(4).Set(bg, "after-restart", "1", 0)
	waitVisible(ctx, `[data-testid="db-4"]`)
	if status := text(`#overview-live [data-testid="status"]`); status != "connected" {
		t.Fatalf("after restart: status = %q", status)
	}
	if !eval(`window.__noReload === true`) {
		t.Fatal("the page reloaded after the restart")
	}
	if e := errs(); len(e) > 0 {
		t.Fatalf("browser console errors: %v", e)
	}
}

// liveText reads an element's text in one evaluation, once the element is
// there. Live fragments are swapped in over the websocket at any moment: a
// node-based read (chromedp.Text) can find its node replaced between the
// query and the read ("No node with given id found").
func liveText(ctx context.Context, sel string) (string, error) {
	js := fmt.Sprintf(`(() => { const e = document.querySelector(%q); return e ? e.textContent || " " : ""; })()`, sel)
	return chromedp.Run(ctx, chromedp.Poll[string](js))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// The zero-setup demo comes up with all three systems, and its overview
// fills in live: the sweep's expiry counts and the measured ops/sec arrive
// over the websocket.
func TestBrowserDemo(t *testing.T) {
	t.Parallel()
	base := startConsole(t, Config{Addr: "127.0.0.1:0", PollInterval: 300 * time.Millisecond, LogFormat: "text", LogLevel: "info"})
	ctx := redistest.Browser(t)
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	errs := consoleErrors(ctx)

	must(t, chromedp.Do(ctx, chromedp.Navigate(base+"/c/eisland"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="demo-banner"]`))))
	nav, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[data-testid="nav"]`)))
	must(t, err)
	for _, name := range []string{"eisland", "gateway", "vertique"} {
		if !strings.Contains(nav, name) {
			t.Fatalf("nav %q lacks %s", nav, name)
		}
	}
	// Every eIsland database 0–14 holds keys, and the sweep fills in expiry.
	for db := range 15 {
		must(t, chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`[data-testid="db-%d"]`, db)))))
	}
	_, err = chromedp.Run(ctx, chromedp.Poll[bool](`/^[0-9,]+$/.test(document.querySelector('[data-testid="db-14"] [data-testid="expires"]').textContent.trim())`))
	must(t, err)
	must(t, chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`[data-testid="ops"] [data-testid="value"]`))))
	screenshot(t, ctx, "demo-eisland.png")

	must(t, chromedp.Do(ctx, chromedp.Navigate(base+"/c/gateway"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="db-0"]`))))
	screenshot(t, ctx, "demo-gateway.png")

	// The leaderboards' database, classified by the detected eisland pack.
	must(t, chromedp.Do(ctx, chromedp.Navigate(base+"/c/eisland/db/14"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="family-mg-leaderboard"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="family-mg-user-meta"]`))))
	pack, err := liveText(ctx, `[data-testid="pack"]`)
	must(t, err)
	if !strings.Contains(pack, "eisland") {
		t.Fatalf("pack line = %q", pack)
	}
	screenshot(t, ctx, "demo-db14.png")
	if e := errs(); len(e) > 0 {
		t.Fatalf("browser console errors: %v", e)
	}
}

// The database page classifies keys with the pack and shows a schema
// violation appear live when a reservation is written without a TTL — with
// a hostile key name rendered as inert text.
func TestBrowserViolationAppearsLive(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	bg := context.Background()
	if err := demo.SeedGateway(bg, rs.Client(0), time.Now()); err != nil {
		t.Fatal(err)
	}
	base := startConsole(t, Config{Addr: "127.0.0.1:0", PollInterval: 200 * time.Millisecond, LogFormat: "text", LogLevel: "info",
		Conns:   []redisview.ConnConfig{{Name: "gw", URL: rs.URL(0)}},
		PackFor: map[string]string{"gw": "gateway"},
		Sweep:   stats.SweepBudget{KeysPerSec: 20000, Count: 200}})
	ctx := redistest.Browser(t)
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	errs := consoleErrors(ctx)

	must(t, chromedp.Do(ctx, chromedp.Navigate(base+"/c/gw/db/0"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="family-reservation"]`))))
	// The seeded data has exactly one reservation without TTL.
	_, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelectorAll('[data-testid="violation"]').length === 1`))
	must(t, err)
	must(t, chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`(window.__noReload = true, undefined)`)))

	hostile := `q:reserved:<script>window.__pwned=1</script>"'`
	rs.Client(0).Set(bg, hostile, "1200", 0)
	_, err = chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelectorAll('[data-testid="violation"]').length === 2`))
	must(t, err)
	keys, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('[data-testid="violation-key"]')].map(e => e.textContent)`))
	must(t, err)
	found := false
	for _, k := range keys {
		found = found || k == hostile
	}
	if !found {
		t.Fatalf("violation keys %q lack the new reservation", keys)
	}
	state, err := chromedp.Run(ctx, chromedp.Evaluate[[]any](`[window.__noReload === true, window.__pwned === undefined]`))
	must(t, err)
	if state[0] != true || state[1] != true {
		t.Fatalf("noReload, notPwned = %v", state)
	}
	screenshot(t, ctx, "db-gateway.png")
	if e := errs(); len(e) > 0 {
		t.Fatalf("browser console errors: %v", e)
	}
}

// Support staff sign in, reset a user's CAPTCHA rate limit through the
// confirmation step, and find the action in the audit log.
func TestBrowserSupportResetsLimit(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	bg := context.Background()
	key := "verify:slider:rate:create:account:" + base64.RawURLEncoding.EncodeToString([]byte("李雷"))
	if err := demo.SliderTokenBucket.Run(bg, rs.Client(4), []string{key}, time.Now().UnixMilli(), 12, 12.0/60/1000, 1, 120).Err(); err != nil {
		t.Fatal(err)
	}
	users := supportUsers(t)
	base := startConsole(t, Config{Addr: "127.0.0.1:0", PollInterval: 200 * time.Millisecond, LogFormat: "text", LogLevel: "info",
		Conns: []redisview.ConnConfig{{Name: "eisland", URL: rs.URL(0)}}, PackFor: map[string]string{"eisland": "eisland"},
		Sweep: stats.DefaultSweepBudget, UsersFile: users, SessionTTL: time.Hour, AuditMaxLen: 1000})
	ctx := redistest.Browser(t)
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	errs := consoleErrors(ctx)

	must(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/c/eisland/db/4"),
		signInAsSupport(),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="key-lookup"]`)),
		chromedp.SendKeys(chromedp.CSS(`[data-testid="key-lookup-input"]`), key),
		chromedp.Click(chromedp.CSS(`[data-testid="key-lookup-open"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="action-reset-limit"]`)),
	))
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('[data-testid="action-delete-key"]').length`)); err != nil || n != 0 {
		t.Fatalf("support is offered admin's delete-key (%d, %v)", n, err)
	}
	screenshot(t, ctx, "key-support.png")
	must(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`[data-testid="action-reset-limit"] [data-testid="preview"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="confirm"]`)),
	))
	summary, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[data-testid="confirm"]`)))
	must(t, err)
	if !strings.Contains(summary, key) {
		t.Fatalf("confirmation does not name the key: %q", summary)
	}
	if n, _ := rs.Client(4).Exists(bg, key).Result(); n != 1 {
		t.Fatal("the preview changed the key")
	}
	screenshot(t, ctx, "confirm.png")
	must(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`[data-testid="confirm-button"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="result-ok"]`)),
	))
	if n, _ := rs.Client(4).Exists(bg, key).Result(); n != 0 {
		t.Fatal("the limit was not reset")
	}
	must(t, chromedp.Do(ctx, chromedp.Navigate(base+"/audit"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="audit-row"]`))))
	rows, err := liveText(ctx, `[data-testid="audit"]`)
	must(t, err)
	if !strings.Contains(rows, "reset-limit") || !strings.Contains(rows, "sam (support)") || !strings.Contains(rows, key) || !strings.Contains(rows, "outcome: ok") {
		t.Fatalf("audit page lacks the action: %q", rows)
	}
	screenshot(t, ctx, "audit.png")
	if e := errs(); len(e) > 0 {
		t.Fatalf("browser console errors: %v", e)
	}
}

// A developer watches a leaderboard: a new top score written from outside
// appears at rank 1, marked new, with the rows it pushed down marked, and
// without a reload.
func TestBrowserLeaderboardLive(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	bg := context.Background()
	db := rs.Client(14)
	const key = "mg:score:leaderboard:2048"
	for i := range 20 {
		user := fmt.Sprintf("player%02d", i)
		db.ZAdd(bg, key, redis.Z{Score: float64(10000 - i*100), Member: user})
		db.HSet(bg, "mg:score:user-meta:2048:"+user, "score", 10000-i*100, "durationMs", 61000, "moves", 300, "achievedAt", time.Now().UnixMilli())
	}
	base := startConsole(t, Config{Addr: "127.0.0.1:0", PollInterval: 200 * time.Millisecond, LogFormat: "text", LogLevel: "info",
		Conns: []redisview.ConnConfig{{Name: "eisland", URL: rs.URL(0)}}, PackFor: map[string]string{"eisland": "eisland"}, Sweep: stats.DefaultSweepBudget})
	ctx := redistest.Browser(t)
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	errs := consoleErrors(ctx)

	must(t, chromedp.Do(ctx, chromedp.Navigate(base+"/leaderboards"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="lb-item"] a`))))
	must(t, chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="lb-item"] a`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid="lb-row"]`))))
	first, err := liveText(ctx, `[data-testid="lb-row"] [data-testid="lb-member"]`)
	must(t, err)
	if first != "player00" {
		t.Fatalf("rank 1 = %q", first)
	}
	must(t, chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`(window.__noReload = true, undefined)`)))

	champion := `<b>李雷</b> "champ"`
	db.ZAdd(bg, key, redis.Z{Score: 99999, Member: champion})
	_, err = chromedp.Run(ctx, chromedp.Poll[bool](`(() => {
		const rows = [...document.querySelectorAll('[data-testid="lb-row"]')];
		return rows.length > 2 && rows[0].querySelector('[data-testid="lb-member"]').textContent === `+"`"+champion+"`"+` &&
			rows[0].dataset.move === 'new' && rows[1].dataset.move === 'down';
	})()`))
	must(t, err)
	state, err := chromedp.Run(ctx, chromedp.Evaluate[[]any](`[window.__noReload === true, document.querySelectorAll('b').length === 0, document.querySelector('[data-testid="lb-row"] [data-testid="lb-move"]').textContent]`))
	must(t, err)
	if state[0] != true || state[1] != true || state[2] != "new" {
		t.Fatalf("noReload, inert, mark = %v", state)
	}
	screenshot(t, ctx, "leaderboard.png")
	if e := errs(); len(e) > 0 {
		t.Fatalf("browser console errors: %v", e)
	}
}

// A counter's key page is live: an INCR from outside shows in the open
// page, and its TTL counts down, without a reload.
func TestBrowserKeyPageLive(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	bg := context.Background()
	db := rs.Client(4)
	key := "verify:slider:fail:account:" + base64.RawURLEncoding.EncodeToString([]byte("ada@example.com"))
	db.Set(bg, key, "1", 100*time.Second)
	base := startConsole(t, Config{Addr: "127.0.0.1:0", PollInterval: 200 * time.Millisecond, LogFormat: "text", LogLevel: "info",
		Conns: []redisview.ConnConfig{{Name: "eisland", URL: rs.URL(0)}}, PackFor: map[string]string{"eisland": "eisland"}, Sweep: stats.DefaultSweepBudget})
	ctx := redistest.Browser(t)
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	errs := consoleErrors(ctx)

	must(t, chromedp.Do(ctx, chromedp.Navigate(base+"/c/eisland/db/4/key?k="+url.QueryEscape(key)), chromedp.WaitVisible(chromedp.CSS(`[data-testid="key-meta"]`))))
	must(t, chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`(window.__noReload = true, undefined)`)))
	text := func(sel string) string {
		t.Helper()
		v, err := liveText(ctx, sel)
		must(t, err)
		return strings.TrimSpace(v)
	}
	ttl := func() time.Duration {
		t.Helper()
		s := strings.TrimPrefix(text(`[data-testid="meta-TTL"]`), "TTL")
		d, err := time.ParseDuration(strings.ReplaceAll(strings.TrimSpace(s), " ", ""))
		if err != nil {
			t.Fatalf("TTL %q: %v", s, err)
		}
		return d
	}
	if v := text(`[data-testid="value-text"]`); v != "1" {
		t.Fatalf("value = %q, want 1", v)
	}
	if parts := text(`[data-testid="name-part-meaning"]`); !strings.Contains(parts, "ada@example.com") {
		t.Fatalf("the Name table reads the account as %q", parts)
	}
	before := ttl()
	db.Incr(bg, key)
	db.Incr(bg, key)
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelector('[data-testid="value-text"]')?.textContent === "3"`)); err != nil {
		t.Fatalf("the page never showed the count 3 (value %q): %v", text(`[data-testid="value-text"]`), err)
	}
	// The server's TTL runs down by itself: the page follows it.
	var after time.Duration
	redistest.Eventually(t, 10*time.Second, "the shown TTL running down", func() bool { after = ttl(); return after < before })
	if before-after > 10*time.Second {
		t.Fatalf("TTL went from %v to %v within 10 s", before, after)
	}
	t.Logf("TTL %v → %v", before, after)
	ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.__noReload === true`))
	must(t, err)
	if !ok {
		t.Fatal("the page reloaded; the count should have arrived over the websocket")
	}
	screenshot(t, ctx, "key-live.png")
	// Deleted while watched: the page says so, with no figures left.
	db.Del(bg, key)
	gone, err := liveText(ctx, `[data-testid="key-gone"]`)
	must(t, err)
	if !strings.Contains(gone, "This key no longer exists — deleted or expired, as of ") {
		t.Fatalf("gone = %q", gone)
	}
	if meta, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector('[data-testid="key-meta"]') === null`)); err != nil || !meta {
		t.Fatalf("a deleted key still shows its figures (%v)", err)
	}
	screenshot(t, ctx, "key-gone.png")
	if e := errs(); len(e) > 0 {
		t.Fatalf("browser console errors: %v", e)
	}
}

// From the database page a family row opens the family's key list, whose
// rows update live (a TTL shortened in Redis shows without a reload), and
// a key's name opens its key page.
func TestBrowserFamilyKeyList(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	bg := context.Background()
	db := rs.Client(4)
	now := time.Now().UnixMilli()
	var keys []string
	for _, user := range []string{"ada", "bob", `<b>eve</b>`} {
		k := "verify:slider:rate:create:account:" + base64.RawURLEncoding.EncodeToString([]byte(user))
		keys = append(keys, k)
		db.HSet(bg, k, "tokens", 3, "ts", now)
		db.Expire(bg, k, time.Hour)
	}
	base := startConsole(t, Config{Addr: "127.0.0.1:0", PollInterval: 200 * time.Millisecond, LogFormat: "text", LogLevel: "info",
		Conns: []redisview.ConnConfig{{Name: "eisland", URL: rs.URL(0)}}, PackFor: map[string]string{"eisland": "eisland"}, Sweep: stats.DefaultSweepBudget})
	ctx := redistest.Browser(t)
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	errs := consoleErrors(ctx)

	fam := `[data-testid="family-slider-rate-create-account"] [data-testid="family-link"]`
	must(t, chromedp.Do(ctx, chromedp.Navigate(base+"/c/eisland/db/4"), chromedp.WaitVisible(chromedp.CSS(fam))))
	// Clicked in the evaluation that finds it: the live page may swap the
	// row between a query and a click (a node gone, under load).
	must(t, chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void](`(document.querySelector('`+fam+`').click(), undefined)`),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="key-row"]`))))
	title, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.title`))
	must(t, err)
	if !strings.Contains(title, "db4 · family slider-rate-create-account") {
		t.Fatalf("title %q", title)
	}
	rows, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('[data-testid="key-row"] [data-testid="key-var"]')].map(e => e.textContent.trim())`))
	must(t, err)
	if len(rows) != 3 {
		t.Fatalf("rows %q", rows)
	}
	sum, err := liveText(ctx, `[data-testid="key-summary"]`)
	must(t, err)
	if !strings.HasSuffix(sum, "of 12 tokens now") {
		t.Fatalf("summary %q", sum)
	}
	must(t, chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`(window.__noReload = true, undefined)`)))

	// Only TTLs under a minute read without "m".
	for _, k := range keys {
		db.Expire(bg, k, 30*time.Second)
	}
	_, err = chromedp.Run(ctx, chromedp.Poll[bool](`(() => {
		const ttls = [...document.querySelectorAll('[data-testid="key-ttl"]')].map(e => e.textContent);
		return ttls.length === 3 && ttls.every(s => s.endsWith('s') && !s.includes('m'));
	})()`))
	must(t, err)
	state, err := chromedp.Run(ctx, chromedp.Evaluate[[]any](`[window.__noReload === true, document.querySelectorAll('b').length === 0]`))
	must(t, err)
	if state[0] != true || state[1] != true {
		t.Fatalf("noReload, inert = %v", state)
	}
	screenshot(t, ctx, "family-keys.png")

	// The key link too.
	must(t, chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void](`(document.querySelector('[data-testid="key-row"] a[data-testid="key-link"]').click(), undefined)`),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="key-meta"]`))))
	u, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.pathname + location.search`))
	must(t, err)
	found := false
	for _, k := range keys {
		found = found || u == "/c/eisland/db/4/key?k="+url.QueryEscape(k)
	}
	if !found {
		t.Fatalf("the key link went to %q", u)
	}
	if e := errs(); len(e) > 0 {
		t.Fatalf("browser console errors: %v", e)
	}
}

// Support staff type an account name in the header box and press enter:
// the search lists its slider keys (derived through base64, not typed
// by hand), and a click opens a key's page.
func TestBrowserSearchAccountFromHeader(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	bg := context.Background()
	const acct = "Zoë:ops/β"
	enc := demo.SliderKeyPart(acct)
	rs.Client(4).Set(bg, "verify:slider:fail:account:"+enc, "2", 10*time.Minute)
	rs.Client(4).HSet(bg, "verify:slider:rate:create:account:"+enc, "tokens", "3", "ts", time.Now().UnixMilli())
	rs.Client(4).Set(bg, "verify:slider:fail:account:"+demo.SliderKeyPart("someone else"), "1", time.Minute)
	base := startConsole(t, Config{Addr: "127.0.0.1:0", PollInterval: 200 * time.Millisecond, LogFormat: "text", LogLevel: "info",
		Conns: []redisview.ConnConfig{{Name: "eisland", URL: rs.URL(0)}}, PackFor: map[string]string{"eisland": "eisland"}, Sweep: stats.DefaultSweepBudget})
	ctx := redistest.Browser(t)
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	errs := consoleErrors(ctx)

	must(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/c/eisland"),
		chromedp.WaitVisible(chromedp.CSS(`header [data-testid="header-search-input"]`)),
		chromedp.SendKeys(chromedp.CSS(`header [data-testid="header-search-input"]`), acct+"\r"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="search-hit"]`)),
	))
	hits, err := liveText(ctx, `[data-testid="search-db-4"]`)
	must(t, err)
	for _, k := range []string{"verify:slider:fail:account:" + enc, "verify:slider:rate:create:account:" + enc} {
		if !strings.Contains(hits, k) {
			t.Fatalf("db4 results lack %s: %q", k, hits)
		}
	}
	if strings.Contains(hits, demo.SliderKeyPart("someone else")) {
		t.Fatalf("another account's key is listed: %q", hits)
	}
	q, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('[data-testid="search-input"]').value`))
	must(t, err)
	if q != acct {
		t.Fatalf("the search ran for %q", q)
	}
	screenshot(t, ctx, "search.png")
	must(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`[data-testid="search-family-slider-fail-account"] a[data-testid="search-key"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="key-name"]`)),
	))
	name, err := liveText(ctx, `[data-testid="key-name"]`)
	must(t, err)
	if name != "verify:slider:fail:account:"+enc {
		t.Fatalf("key page of %q", name)
	}
	if e := errs(); len(e) > 0 {
		t.Fatalf("browser console errors: %v", e)
	}
}

// The quotas page of a gateway on real Redis: a budget's row updates in
// the open page after an INCRBY from outside, with no reload, and its key
// id opens the gateway API key page with that budget on it.
func TestBrowserQuotasLive(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	bg := context.Background()
	c := rs.Client(0)
	month := time.Now().UTC().Format("200601")
	budget := "q:tokens:gk_live:" + month
	c.IncrBy(bg, budget, 1000)
	c.Expire(bg, budget, 40*24*time.Hour)
	c.Set(bg, "cfg:routing:version", 7, 0)
	base := startConsole(t, Config{Addr: "127.0.0.1:0", PollInterval: 200 * time.Millisecond, LogFormat: "text", LogLevel: "info",
		Conns: []redisview.ConnConfig{{Name: "gateway", URL: rs.URL(0)}}, PackFor: map[string]string{"gateway": "gateway"}, Sweep: stats.DefaultSweepBudget})
	ctx := redistest.Browser(t)
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	errs := consoleErrors(ctx)

	row := `[data-testid="quota-family-monthly-tokens"] [data-testid="quota-row"]`
	must(t, chromedp.Do(ctx, chromedp.Navigate(base+"/c/gateway/quotas"), chromedp.WaitVisible(chromedp.CSS(row))))
	used, err := liveText(ctx, row+` [data-testid="quota-used"]`)
	must(t, err)
	if !strings.Contains(used, "1,000 tokens") {
		t.Fatalf("budget row shows %q, want 1,000 tokens", used)
	}
	must(t, chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`(window.__noReload = true, undefined)`)))
	c.IncrBy(bg, budget, 41_345)
	_, err = chromedp.Run(ctx, chromedp.Poll[bool](`(() => {
		const e = document.querySelector('`+row+` [data-testid="quota-used"]');
		return !!e && e.textContent.includes('42,345 tokens');
	})()`))
	must(t, err)
	noReload, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.__noReload === true`))
	must(t, err)
	if !noReload {
		t.Fatal("the page reloaded")
	}
	screenshot(t, ctx, "quotas.png")

	must(t, chromedp.Do(ctx, chromedp.Click(chromedp.CSS(row+` [data-testid="quota-subject"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="gwkey-budget"]`))))
	id, err := liveText(ctx, `[data-testid="gwkey-id"]`)
	must(t, err)
	this, err := liveText(ctx, `[data-testid="gwkey-budget-used"]`)
	must(t, err)
	if strings.TrimSpace(id) != "gk_live" || !strings.Contains(this, "42,345 tokens") {
		t.Fatalf("gateway key page: id %q, this month %q", id, this)
	}
	if e := errs(); len(e) > 0 {
		t.Fatalf("browser console errors: %v", e)
	}
}

// Support checks a banned unicode name on the bans page and unbans it from
// a second tab: the first tab's verdict flips to "not banned" live, and
// the audit log shows the unban.
func TestBrowserSupportUnbansLive(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	bg := context.Background()
	const name, bits = "韩梅梅 🦊", 1000003
	db := rs.Client(9)
	db.SetBit(bg, "user:ban:bloom", bits-1, 0)
	for _, n := range []string{name, "eve<script>", "ops:admin"} {
		db.SAdd(bg, "user:ban:set", n)
		for _, off := range redisview.BloomPositions(n, bits, 6) {
			db.SetBit(bg, "user:ban:bloom", off, 1)
		}
	}
	users := supportUsers(t)
	base := startConsole(t, Config{Addr: "127.0.0.1:0", PollInterval: 200 * time.Millisecond, LogFormat: "text", LogLevel: "info",
		Conns: []redisview.ConnConfig{{Name: "eisland", URL: rs.URL(0)}}, PackFor: map[string]string{"eisland": "eisland"},
		Sweep: stats.DefaultSweepBudget, UsersFile: users, SessionTTL: time.Hour, AuditMaxLen: 1000})
	ctx := redistest.Browser(t)
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	errs := consoleErrors(ctx)
	const verdict = `[data-testid="banlist-user-ban-bloom"] [data-testid="ban-verdict"]`

	must(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/c/eisland/bans"),
		signInAsSupport(),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="ban-check-input"]`)),
		chromedp.SendKeys(chromedp.CSS(`[data-testid="ban-check-input"]`), name+"\r"),
		chromedp.WaitVisible(chromedp.CSS(verdict)),
	))
	if v, err := liveText(ctx, verdict); err != nil || v != "banned" {
		t.Fatalf("verdict %q (%v), want banned", v, err)
	}
	checked, err := liveText(ctx, `[data-testid="banlist-user-ban-bloom"] [data-testid="ban-check-name"]`)
	must(t, err)
	if checked != name {
		t.Fatalf("checked %q, want %q", checked, name)
	}
	screenshot(t, ctx, "bans-check.png")

	// A second tab of the same session unbans through the check's link.
	tab, closeTab := chromedp.NewContext(ctx)
	defer closeTab()
	must(t, chromedp.Do(tab,
		chromedp.Navigate(base+"/c/eisland/bans?check="+url.QueryEscape(name)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="unban-action"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="unban-action"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="confirm"]`)),
	))
	summary, err := chromedp.Run(tab, chromedp.Text(chromedp.CSS(`[data-testid="confirm"]`)))
	must(t, err)
	if !strings.Contains(summary, "UNBAN") || !strings.Contains(summary, name) {
		t.Fatalf("confirmation %q", summary)
	}
	must(t, chromedp.Do(tab,
		chromedp.Click(chromedp.CSS(`[data-testid="confirm-button"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="result-ok"]`)),
	))
	if ok, _ := db.SIsMember(bg, "user:ban:set", name).Result(); ok {
		t.Fatal("the name is still in the ban set")
	}

	// The first tab, untouched, shows the new verdict.
	js := fmt.Sprintf(`(() => { const e = document.querySelector(%q); return !!e && e.textContent.startsWith("bloom says maybe, set says no: not banned"); })()`, verdict)
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](js)); err != nil {
		v, _ := liveText(ctx, verdict)
		t.Fatalf("the verdict did not flip live: %q (%v)", v, err)
	}
	screenshot(t, ctx, "bans-unbanned.png")

	must(t, chromedp.Do(ctx, chromedp.Navigate(base+"/audit"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="audit-row"]`))))
	rows, err := liveText(ctx, `[data-testid="audit"]`)
	must(t, err)
	if !strings.Contains(rows, "unban") || !strings.Contains(rows, "sam (support)") || !strings.Contains(rows, name) || !strings.Contains(rows, "outcome: ok") {
		t.Fatalf("audit page lacks the unban: %q", rows)
	}
	screenshot(t, ctx, "bans-audit.png")
	if e := errs(); len(e) > 0 {
		t.Fatalf("browser console errors: %v", e)
	}
}

// Support finds a locked login on the Rate limits page, unlocks it from a
// second tab in two clicks (Unlock…, Confirm), and the row leaves the first
// tab without a reload; the audit log shows the action. A lock taken with
// SET NX PX appears with its holder's UUID on the Locks page and leaves it
// when released.
func TestBrowserSupportUnlocksLogin(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	bg := context.Background()
	now := time.Now()
	for user, n := range map[string]int{"eve.locked": 5, "frank": 2} {
		key := "auth:limit:login:failures:" + user
		for i := range n {
			ms := now.Add(-time.Duration(i+1) * time.Second).UnixMilli()
			rs.Client(6).ZAdd(bg, key, redis.Z{Score: float64(ms), Member: fmt.Sprintf("%d:%d", ms, i)})
		}
		rs.Client(6).Expire(bg, key, 15*time.Minute)
	}
	rs.Client(6).Set(bg, "auth:limit:login:lock:eve.locked", fmt.Sprint(now.Add(10*time.Minute).UnixMilli()), 10*time.Minute)
	users := supportUsers(t)
	base := startConsole(t, Config{Addr: "127.0.0.1:0", PollInterval: 200 * time.Millisecond, LogFormat: "text", LogLevel: "info",
		Conns: []redisview.ConnConfig{{Name: "eisland", URL: rs.URL(0)}}, PackFor: map[string]string{"eisland": "eisland"},
		Sweep: stats.DefaultSweepBudget, UsersFile: users, SessionTTL: time.Hour, AuditMaxLen: 1000})
	ctx := redistest.Browser(t)
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	errs := consoleErrors(ctx)

	const family = `[data-testid="limit-family-login-failures"]`
	must(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/c/eisland/limits"),
		signInAsSupport(),
		chromedp.WaitVisible(chromedp.CSS(family)),
	))
	// The locked login is the family's first row, with its Unlock… link.
	first, err := liveText(ctx, family+` [data-testid="limit-row"]`)
	must(t, err)
	if !strings.Contains(first, "eve.locked") || !strings.Contains(first, "locked until") || !strings.Contains(first, "Unlock…") {
		t.Fatalf("first login row: %q", first)
	}
	href, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('`+family+` [data-testid="limit-row"] [data-testid="row-action"]').href`))
	must(t, err)
	screenshot(t, ctx, "limits.png")
	_, err = chromedp.Run(ctx, chromedp.Evaluate[bool](`window.__notReloaded = true`))
	must(t, err)

	// A second tab: the link's preview, then Confirm.
	tab, closeTab := chromedp.NewContext(ctx)
	defer closeTab()
	must(t, chromedp.Do(tab,
		chromedp.Navigate(href),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="confirm"]`)),
	))
	summary, err := chromedp.Run(tab, chromedp.Text(chromedp.CSS(`[data-testid="confirm"]`)))
	must(t, err)
	if !strings.Contains(summary, "auth:limit:login:lock:eve.locked") || !strings.Contains(summary, "auth:limit:login:failures:eve.locked") {
		t.Fatalf("the preview does not name both keys: %q", summary)
	}
	must(t, chromedp.Do(tab,
		chromedp.Click(chromedp.CSS(`[data-testid="confirm-button"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="result-ok"]`)),
	))
	if n := rs.Client(6).Exists(bg, "auth:limit:login:lock:eve.locked", "auth:limit:login:failures:eve.locked").Val(); n != 0 {
		t.Fatalf("%d of the two keys left", n)
	}
	// The first tab drops the row by itself.
	gone := `(() => { const f = document.querySelector('` + family + `'); return !!f && !f.textContent.includes('eve.locked') && f.textContent.includes('frank') && window.__notReloaded === true; })()`
	_, err = chromedp.Run(ctx, chromedp.Poll[bool](gone))
	must(t, err)

	must(t, chromedp.Do(tab, chromedp.Navigate(base+"/audit"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="audit-row"]`))))
	rows, err := liveText(tab, `[data-testid="audit"]`)
	must(t, err)
	if !strings.Contains(rows, "unlock-login") || !strings.Contains(rows, "sam (support)") || !strings.Contains(rows, "eve.locked") || !strings.Contains(rows, "outcome: ok") {
		t.Fatalf("audit page lacks the action: %q", rows)
	}

	// A lock taken with SET NX PX shows its holder, and goes when released.
	const lock, holder = "payment:lock:create:pro-month:gina", "5d0c8f5e-8a6b-4f43-9d3c-2f1f3c9b7e21"
	if !rs.Client(10).SetNX(bg, lock, holder, 60*time.Second).Val() {
		t.Fatal("SET NX PX refused")
	}
	must(t, chromedp.Do(ctx, chromedp.Navigate(base+"/c/eisland/locks")))
	_, err = chromedp.Run(ctx, chromedp.Poll[bool](`(() => { const l = document.querySelector('[data-testid="locks"]'); return !!l && l.textContent.includes('`+holder+`'); })()`))
	must(t, err)
	screenshot(t, ctx, "locks.png")
	_, err = chromedp.Run(ctx, chromedp.Evaluate[bool](`window.__notReloaded = true`))
	must(t, err)
	rs.Client(10).Del(bg, lock)
	_, err = chromedp.Run(ctx, chromedp.Poll[bool](`(() => { const l = document.querySelector('[data-testid="locks"]'); return !!l && !l.textContent.includes('`+holder+`') && window.__notReloaded === true; })()`))
	must(t, err)
	if e := errs(); len(e) > 0 {
		t.Fatalf("browser console errors: %v", e)
	}
}

// Support goes from a name to its unlock: on the demo, the header search
// of "ops:admin" links the user page, which shows the login lock with its
// unlock time (live), and the lock's Unlock login link opens its preview.
func TestBrowserUserPageFromSearch(t *testing.T) {
	t.Parallel()
	base := startConsole(t, Config{Addr: "127.0.0.1:0", PollInterval: 300 * time.Millisecond, LogFormat: "text", LogLevel: "info"})
	ctx := redistest.Browser(t)
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	errs := consoleErrors(ctx)
	const lock = "auth:limit:login:lock:ops:admin"

	must(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/c/eisland"),
		chromedp.WaitVisible(chromedp.CSS(`header [data-testid="header-search-input"]`)),
		chromedp.SendKeys(chromedp.CSS(`header [data-testid="header-search-input"]`), "ops:admin\r"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="search-user-page"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="search-user-page"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="user-key"]`)),
	))
	name, err := liveText(ctx, `[data-testid="user-name"]`)
	must(t, err)
	if name != "ops:admin" {
		t.Fatalf("user page of %q", name)
	}
	// The lock, decoded: its unlock time.
	row := `[...document.querySelectorAll('[data-testid="user-key"]')].find(li => li.querySelector('[data-testid="user-key-name"]').textContent.trim() === '` + lock + `')`
	text, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(`+row+` || {textContent: ""}).textContent`))
	must(t, err)
	if !strings.Contains(text, "Locked until") || !strings.Contains(text, "Unlocks at") {
		t.Fatalf("the login lock is not shown with its unlock time: %q", text)
	}
	// Live: the fragment is pushed again (its read time moves on).
	first, err := liveText(ctx, `[data-testid="user-cost"]`)
	must(t, err)
	_, err = chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelector('[data-testid="user-cost"]').textContent.trim() !== `+fmt.Sprintf("%q", first)))
	must(t, err)
	screenshot(t, ctx, "user.png")
	// The lock's unlock link opens its preview.
	_, err = chromedp.Run(ctx, chromedp.Evaluate[bool](row+`.querySelector('[data-testid="user-action-unlock-login"]').click() || true`))
	must(t, err)
	must(t, chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`[data-testid="confirm"]`))))
	summary, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[data-testid="confirm"]`)))
	must(t, err)
	if !strings.Contains(summary, lock) {
		t.Fatalf("the preview does not name the lock: %q", summary)
	}
	if e := errs(); len(e) > 0 {
		t.Fatalf("browser console errors: %v", e)
	}
}

// supportUsers writes a users file with sam, of role support.
func supportUsers(t *testing.T) string {
	t.Helper()
	hash, _ := bcrypt.GenerateFromPassword([]byte("support-password"), bcrypt.MinCost)
	users := filepath.Join(t.TempDir(), "users.yaml")
	if err := os.WriteFile(users, []byte("users:\n  - name: sam\n    role: support\n    password_hash: \""+string(hash)+"\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return users
}

// signInAsSupport fills the sign-in form the console shows in place of a
// page, as supportUsers' "sam".
func signInAsSupport() chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, _ *chromedp.Target) (chromedp.Void, error) {
		return chromedp.Void{}, chromedp.Do(ctx,
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="login-form"]`)),
			chromedp.SendKeys(chromedp.CSS(`[data-testid="username"]`), "sam"),
			chromedp.SendKeys(chromedp.CSS(`[data-testid="password"]`), "support-password"),
			chromedp.Click(chromedp.CSS(`[data-testid="sign-in"]`)),
		)
	}
}

// fixInThreeClicks is support's way from a user's name to the fix: the
// name typed in the header search box (Enter, not a click), "Open the
// user page" (click 1), the fix's link on the user page, fix (click 2),
// Confirm (click 3), until the result says done. It returns the clicks
// made and the time from the first key press to the result.
func fixInThreeClicks(t *testing.T, ctx context.Context, base, name, fix string) (int, time.Duration) {
	t.Helper()
	clicks := 0
	// A click is one evaluation that finds the element and clicks it: the
	// user page is live, and a websocket swap between finding a node and
	// clicking it would leave chromedp a node that no longer exists.
	click := func(sel string) chromedp.Action[chromedp.Void] {
		js := fmt.Sprintf(`(() => { const e = document.querySelector(%q); if (!e) return false; e.click(); return true; })()`, sel)
		return func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
			clicks++
			ok, err := chromedp.Evaluate[bool](js)(ctx, tg)
			if err == nil && !ok {
				err = fmt.Errorf("nothing to click at %s", sel)
			}
			return chromedp.Void{}, err
		}
	}
	must(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/c/eisland"),
		chromedp.WaitVisible(chromedp.CSS(`header [data-testid="header-search-input"]`)),
	))
	start := time.Now()
	must(t, chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS(`header [data-testid="header-search-input"]`), name+"\r"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="search-user-page"]`)),
		click(`[data-testid="search-user-page"]`),
		chromedp.WaitVisible(chromedp.CSS(fix)),
	))
	got, err := liveText(ctx, `[data-testid="user-name"]`)
	must(t, err)
	if got != name {
		t.Fatalf("user page of %q, want %q", got, name)
	}
	must(t, chromedp.Do(ctx,
		click(fix),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="confirm"]`)),
		click(`[data-testid="confirm-button"]`),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="result-ok"]`)),
	))
	return clicks, time.Since(start)
}

// Issue 13's promise: support goes from a user's name to unbanned, and
// from a name to unlocked, in at most 3 clicks (and 15 seconds: the time
// each took is logged; a loaded test machine cannot time it) — on real
// Redis (the eIsland layout) and on the embedded demo. A user page left
// open in another tab shows the verdict flip live; the audit log shows
// both actions.
func TestBrowserSupportNameToFixInThreeClicks(t *testing.T) {
	// Not parallel: beside other browser tests the demo's open user page
	// missed its live flip within the wait.
	type target struct {
		conns           []redisview.ConnConfig
		banned, locked  string
		lockKey, window string
		gone            func() (banned, locked bool) // read from outside the console
	}
	live := func(t *testing.T) target {
		rs := redistest.Start(t)
		bg := context.Background()
		const banned, locked, bits = "韩梅梅 🦊", "Zoë <b>locked</b>", 1000003
		db := rs.Client(9)
		db.SetBit(bg, "user:ban:bloom", bits-1, 0)
		for _, n := range []string{banned, "eve<script>", "ops:admin"} {
			db.SAdd(bg, "user:ban:set", n)
			for _, off := range redisview.BloomPositions(n, bits, 6) {
				db.SetBit(bg, "user:ban:bloom", off, 1)
			}
		}
		now := time.Now()
		window, lock := "auth:limit:login:failures:"+locked, "auth:limit:login:lock:"+locked
		for i := range 5 {
			ms := now.Add(-time.Duration(i+1) * time.Second).UnixMilli()
			rs.Client(6).ZAdd(bg, window, redis.Z{Score: float64(ms), Member: fmt.Sprintf("%d:%d", ms, i)})
		}
		rs.Client(6).Expire(bg, window, 15*time.Minute)
		rs.Client(6).Set(bg, lock, fmt.Sprint(now.Add(10*time.Minute).UnixMilli()), 10*time.Minute)
		return target{conns: []redisview.ConnConfig{{Name: "eisland", URL: rs.URL(0)}}, banned: banned, locked: locked, lockKey: lock, window: window,
			gone: func() (bool, bool) {
				return !db.SIsMember(bg, "user:ban:set", banned).Val(), rs.Client(6).Exists(bg, lock).Val() == 0
			}}
	}
	demoTarget := func(t *testing.T) target {
		// The demo's seed bans "🦊fox" and locks "bob_chen" for at least
		// six minutes (internal/demo: seedBans, seedAuthLimits). Not
		// "ops:admin": the simulator aims its failed logins at it
		// (loginTargets) and locked it again between the unlock and the
		// check, on a loaded machine.
		return target{banned: "🦊fox", locked: "bob_chen", lockKey: "auth:limit:login:lock:bob_chen", window: "auth:limit:login:failures:bob_chen"}
	}
	for _, tc := range []struct {
		name string
		make func(*testing.T) target
	}{{"redis", live}, {"demo", demoTarget}} {
		t.Run(tc.name, func(t *testing.T) {
			tg := tc.make(t)
			cfg := Config{Addr: "127.0.0.1:0", PollInterval: 200 * time.Millisecond, LogFormat: "text", LogLevel: "info",
				Sweep: stats.DefaultSweepBudget, UsersFile: supportUsers(t), SessionTTL: time.Hour, AuditMaxLen: 1000}
			if tg.conns != nil {
				cfg.Conns, cfg.PackFor = tg.conns, map[string]string{"eisland": "eisland"}
			}
			base := startConsole(t, cfg)
			ctx := redistest.Browser(t)
			ctx, cancel := context.WithTimeout(ctx, 120*time.Second)
			defer cancel()
			errs := consoleErrors(ctx)
			must(t, chromedp.Do(ctx,
				chromedp.Navigate(base+"/c/eisland"),
				signInAsSupport(),
				chromedp.WaitVisible(chromedp.CSS(`header [data-testid="header-search-input"]`)),
			))

			// A second tab watches the banned user's page.
			watch, closeWatch := chromedp.NewContext(ctx)
			defer closeWatch()
			must(t, chromedp.Do(watch,
				chromedp.Navigate(base+route.UserURL("eisland", tg.banned)),
				chromedp.WaitVisible(chromedp.CSS(`[data-testid="user-ban-verdict"]`)),
			))
			if v, err := liveText(watch, `[data-testid="user-ban-verdict"]`); err != nil || v != "banned" {
				t.Fatalf("verdict of %q before: %q (%v)", tg.banned, v, err)
			}
			_, err := chromedp.Run(watch, chromedp.Evaluate[bool](`window.__notReloaded = true`))
			must(t, err)

			clicks, took := fixInThreeClicks(t, ctx, base, tg.banned, `[data-testid="user-unban"]`)
			t.Logf("%s: name → unbanned in %d clicks, %s", tc.name, clicks, took.Round(time.Millisecond))
			if clicks > 3 { // the time is logged, not asserted: speed is for benchmarks, not a loaded test machine
				t.Fatalf("unban took %d clicks (and %s); the promise is at most 3", clicks, took)
			}
			screenshot(t, ctx, "three-clicks-unbanned-"+tc.name+".png")
			flipped := `(() => { const e = document.querySelector('[data-testid="user-ban-verdict"]'); return !!e && e.textContent.trim().startsWith("not banned") && !document.querySelector('[data-testid="user-unban"]') && window.__notReloaded === true; })()`
			if _, err := chromedp.Run(watch, chromedp.Poll[bool](flipped)); err != nil {
				v, _ := liveText(watch, `[data-testid="user-ban-verdict"]`)
				t.Fatalf("the open user page did not flip to not banned: %q (%v)", v, err)
			}

			clicks, took = fixInThreeClicks(t, ctx, base, tg.locked, `[data-testid="user-action-unlock-login"]`)
			t.Logf("%s: name → unlocked in %d clicks, %s", tc.name, clicks, took.Round(time.Millisecond))
			if clicks > 3 { // the time is logged, not asserted: speed is for benchmarks, not a loaded test machine
				t.Fatalf("unlock took %d clicks (and %s); the promise is at most 3", clicks, took)
			}
			done, err := liveText(ctx, `[data-testid="result-ok"]`)
			must(t, err)
			if !strings.Contains(done, tg.lockKey) || !strings.Contains(done, tg.window) {
				t.Fatalf("the unlock did not take both the lock and the window: %q", done)
			}
			if tg.gone != nil {
				if unbanned, unlocked := tg.gone(); !unbanned || !unlocked {
					t.Fatalf("read from Redis: unbanned %v, unlocked %v", unbanned, unlocked)
				}
			}
			// The user page now: not banned, and no lock.
			must(t, chromedp.Do(ctx,
				chromedp.Navigate(base+route.UserURL("eisland", tg.banned)),
				chromedp.WaitVisible(chromedp.CSS(`[data-testid="user-ban-verdict"]`)),
			))
			if v, _ := liveText(ctx, `[data-testid="user-ban-verdict"]`); !strings.HasPrefix(v, "not banned") {
				t.Fatalf("verdict of %q after: %q", tg.banned, v)
			}
			must(t, chromedp.Do(ctx,
				chromedp.Navigate(base+route.UserURL("eisland", tg.locked)),
				chromedp.WaitVisible(chromedp.CSS(`[data-testid="user-cost"]`)),
			))
			keys, err := chromedp.Run(ctx, chromedp.Evaluate[string](`[...document.querySelectorAll('[data-testid="user-key-name"]')].map(e => e.textContent.trim()).join("\n")`))
			must(t, err)
			if strings.Contains(keys, tg.lockKey) {
				t.Fatalf("the login is still locked: %q", keys)
			}

			must(t, chromedp.Do(ctx, chromedp.Navigate(base+"/audit"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="audit-row"]`))))
			rows, err := liveText(ctx, `[data-testid="audit"]`)
			must(t, err)
			for _, want := range []string{"unban", "unlock-login", "sam (support)", tg.banned, tg.lockKey, "outcome: ok"} {
				if !strings.Contains(rows, want) {
					t.Fatalf("the audit log lacks %q: %q", want, rows)
				}
			}
			if e := errs(); len(e) > 0 {
				t.Fatalf("browser console errors: %v", e)
			}
		})
	}
}
