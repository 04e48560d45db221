package main

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/demo"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview/action"
)

// axeDB is the demo's eIsland database where the test adds the kinds of
// key the seeds lack (a big hash, a stream, a list, a set): the simulator
// never writes there.
const axeDB = 13

// startAxeConsole runs the embedded demo as `go run ./cmd/web` does, with
// one admin account, and answers its base URL and a function that adds the
// test's keys to axeDB.
func startAxeConsole(t *testing.T) (string, func()) {
	t.Helper()
	conns := make(chan []demo.Conn, 1)
	base := startConsole(t, Config{Addr: "127.0.0.1:0", PollInterval: 300 * time.Millisecond, LogFormat: "text", LogLevel: "info",
		UsersFile: axeUsers(t), SessionTTL: time.Hour, AuditMaxLen: 1000,
		demoStarted: func(c []demo.Conn) { conns <- c }})
	var eisland string
	for _, c := range <-conns {
		if c.Name == "eisland" {
			eisland = c.URL
		}
	}
	opt, err := redis.ParseURL(eisland)
	must(t, err)
	opt.DB, opt.DisableIdentity = axeDB, true // miniredis has no CLIENT command
	rc := redis.NewClient(opt)
	t.Cleanup(func() { _ = rc.Close() })
	return base, func() {
		bg := context.Background()
		fields := make([]any, 0, 2*300)
		for i := range 300 {
			fields = append(fields, "field:"+strconv.Itoa(i), strconv.Itoa(i*7))
		}
		must(t, rc.HSet(bg, "a11y:bighash", fields...).Err())
		for i := range 40 {
			must(t, rc.XAdd(bg, &redis.XAddArgs{Stream: "a11y:stream", Values: []string{"event", "login", "n", strconv.Itoa(i)}}).Err())
		}
		must(t, rc.RPush(bg, "a11y:list", "a", "b", "c").Err())
		must(t, rc.SAdd(bg, "a11y:set", "x", "y", "z").Err())
		must(t, rc.Set(bg, "a11y:string", "hello", time.Hour).Err())
	}
}

// axePage is one page type: how to open an example of it (answering the
// URL it stands at) and what to do after it was checked.
type axePage struct {
	name  string
	open  func(ctx context.Context, base string) (string, error)
	after chromedp.Action[chromedp.Void]
}

// axePages is one example of every page type (every GET HTML route of
// RouteTable, and the pages a POST answers: the bulk count), on the demo.
// The sign-in page comes first: after it the tab is signed in.
func axePages() []axePage {
	const ei = "eisland"
	keyOf := func(conn string, db int, family string) func(context.Context, string) (string, error) {
		return func(ctx context.Context, base string) (string, error) {
			return openFirstKey(ctx, base, conn, db, family)
		}
	}
	// Setting a TTL is an action both modes' tabs can confirm in turn.
	ttl := route.Action{Kind: action.KindSetTTL, Conn: ei, DB: axeDB, Key: "a11y:list", Args: map[string]string{action.ArgTTL: "7d"}}
	return []axePage{
		{name: "login", open: at(route.Login), after: signInAsAdmin()},
		{name: "home", open: at(route.Home)},
		{name: "overview", open: at(route.OverviewURL(ei))},
		{name: "database", open: at(route.DatabaseURL(ei, 14))},
		{name: "keys by family", open: at(route.FamilyKeysURL(ei, 14, "mg-user-meta"))},
		{name: "keys by pattern", open: at(route.PatternKeysURL(ei, axeDB, "a11y:*"))},
		{name: "key string", open: keyOf(ei, 3, "wallpaper-list")},
		{name: "key hash", open: keyOf(ei, 13, "agent-usage")},
		{name: "key zset leaderboard", open: keyOf(ei, 14, "mg-leaderboard")},
		{name: "key token bucket", open: keyOf(ei, 4, "slider-rate-create-account")},
		{name: "key bucket4j", open: keyOf("vertique", 0, "bucket")},
		{name: "key lock", open: keyOf(ei, 6, "login-lock")},
		{name: "key quota", open: keyOf("gateway", 0, "monthly-tokens")},
		{name: "key set", open: keyOf("gateway", 0, "concurrency")},
		{name: "key big hash", open: at(route.KeyURL(ei, axeDB, "a11y:bighash"))},
		{name: "key stream", open: at(route.KeyURL(ei, axeDB, "a11y:stream"))},
		{name: "key list", open: at(route.KeyURL(ei, axeDB, "a11y:list"))},
		{name: "key not found", open: at(route.KeyURL(ei, axeDB, "a11y:none"))},
		{name: "leaderboards", open: at(route.Leaderboards)},
		{name: "leaderboard", open: follow(route.Leaderboards, `[data-testid="lb-item"] a`)},
		{name: "user", open: at(route.UserURL(ei, "bob_chen"))},
		{name: "bans", open: at(route.BansURL(ei))},
		{name: "limits", open: at(route.LimitsURL(ei))},
		{name: "locks", open: at(route.LocksURL(ei))},
		{name: "violations", open: at(route.ViolationsURL("gateway"))},
		{name: "quotas", open: at(route.QuotasURL("gateway"))},
		{name: "gateway key", open: follow(route.QuotasURL("gateway"), `a[href*="/gateway/key?"]`)},
		{name: "vertique", open: at(route.VertiqueURL("vertique"))},
		{name: "search", open: at(route.SearchURL(ei, "alice"))},
		{name: "audit", open: at(route.Audit)},
		{name: "account", open: at(route.Account)},
		{name: "tokens", open: at(route.AccountTokens)},
		{name: "server", open: at(route.ServerInfoURL(ei))},
		{name: "clients", open: at(route.ClientsURL(ei))},
		{name: "latency", open: at(route.LatencyURL(ei))},
		{name: "slowlog", open: at(route.SlowlogURL(ei))},
		{name: "pubsub", open: at(route.PubSubURL(ei))},
		{name: "console", open: at(route.ConsoleURL(ei))},
		{name: "import", open: at(route.ImportURL(ei, axeDB))},
		{name: "action preview", open: at(route.Action{Kind: action.KindDeleteKey, Conn: ei, DB: axeDB, Key: "a11y:string"}.PreviewURL())},
		{name: "audit record", open: openAuditRecord(ttl)},
		{name: "undo preview", open: openUndoPreview(ttl)},
		{name: "bulk preview", open: openBulkCount(ei, axeDB, "a11y:*")},
		{name: "not found", open: at("/c/" + ei + "/no-such-page")},
	}
}

// at opens path and waits for the page to have loaded.
func at(path string) func(context.Context, string) (string, error) {
	return func(ctx context.Context, base string) (string, error) {
		return base + path, chromedp.Do(ctx, chromedp.Navigate(base+path), chromedp.WaitReady(chromedp.CSS("body")))
	}
}

// follow opens from and then the first link sel finds there.
func follow(from, sel string) func(context.Context, string) (string, error) {
	return func(ctx context.Context, base string) (string, error) {
		if _, err := at(from)(ctx, base); err != nil {
			return "", err
		}
		href, err := chromedp.Run(ctx, chromedp.Poll[string](fmt.Sprintf(`(() => { const a = document.querySelector(%q); return a ? a.getAttribute('href') : ''; })()`, sel)))
		if err != nil {
			return "", fmt.Errorf("%s: no link %s: %w", from, sel, err)
		}
		return at(href)(ctx, base)
	}
}

// openFirstKey opens the key page of the first key of a family, read from
// the key list's JSON (the demo's keys of a family change as it runs).
func openFirstKey(ctx context.Context, base, conn string, db int, family string) (string, error) {
	list := route.FamilyKeysURL(conn, db, family)
	js := fmt.Sprintf(`fetch(%q, {headers: {Accept: 'application/json'}}).then(r => r.json()).then(j => ((j.keys && j.keys.items) || []).map(i => i.key).find(k => k) || '')`, list)
	var key string
	for range 40 { // a short-lived family (locks) may be empty a moment
		k, err := chromedp.Run(ctx, chromedp.Evaluate[string](js, chromedp.EvalAwaitPromise))
		if err != nil {
			return "", fmt.Errorf("%s: %w", list, err)
		}
		if key = k; key != "" {
			break
		}
		if _, err := at(list)(ctx, base); err != nil {
			return "", err
		}
	}
	if key == "" {
		return "", fmt.Errorf("%s lists no key", list)
	}
	return at(route.KeyURL(conn, db, key))(ctx, base)
}

// openBulkCount asks for a bulk delete of a pattern's keys from its key
// list: the page answering the POST is the count and the confirmation.
func openBulkCount(conn string, db int, pattern string) func(context.Context, string) (string, error) {
	return func(ctx context.Context, base string) (string, error) {
		if _, err := at(route.PatternKeysURL(conn, db, pattern))(ctx, base); err != nil {
			return "", err
		}
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="bulk-delete"] button`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="bulk-count"]`))); err != nil {
			return "", err
		}
		return chromedp.Run(ctx, chromedp.Evaluate[string](`location.href`))
	}
}

// signInAsAdmin fills the sign-in form as axeUsers' "ada".
func signInAsAdmin() chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, _ *chromedp.Target) (chromedp.Void, error) {
		return chromedp.Void{}, chromedp.Do(ctx,
			chromedp.SendKeys(chromedp.CSS(`[data-testid="username"]`), "ada"),
			chromedp.SendKeys(chromedp.CSS(`[data-testid="password"]`), "admin-password"),
			chromedp.Click(chromedp.CSS(`[data-testid="sign-in"]`)),
			chromedp.WaitNotPresent(chromedp.CSS(`[data-testid="login-form"]`)),
		)
	}
}

// openAuditRecord confirms an action: the page it leads to is the audit
// record's own.
func openAuditRecord(a route.Action) func(context.Context, string) (string, error) {
	return func(ctx context.Context, base string) (string, error) {
		if _, err := at(a.PreviewURL())(ctx, base); err != nil {
			return "", err
		}
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="confirm-button"]`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="undo"]`))); err != nil {
			return "", fmt.Errorf("confirming %s: %w", a.Kind, err)
		}
		return chromedp.Run(ctx, chromedp.Evaluate[string](`location.href`))
	}
}

// openUndoPreview follows the Undo link of a confirmed action's record.
func openUndoPreview(a route.Action) func(context.Context, string) (string, error) {
	return func(ctx context.Context, base string) (string, error) {
		if _, err := openAuditRecord(a)(ctx, base); err != nil {
			return "", err
		}
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="undo"]`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="confirm-button"]`))); err != nil {
			return "", fmt.Errorf("undo of %s: %w", a.Kind, err)
		}
		return chromedp.Run(ctx, chromedp.Evaluate[string](`location.href`))
	}
}
