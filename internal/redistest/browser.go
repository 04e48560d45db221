package redistest

import (
	"context"
	"os"
	"os/exec"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
)

// shared is the one headless Chromium of a test binary, started by the
// first Browser call and stopped by CloseBrowser (a package's TestMain):
// starting a Chromium costs about a second of CPU, once per test before.
var shared struct {
	sync.Mutex
	ctx    context.Context // the browser's first tab; nil until started
	cancel func()
	dir    string // its user data directory
}

// Browser returns a chromedp context on a tab of its own, in a browser
// context of its own (an incognito-like profile: cookies, storage and cache
// apart from every other test's, disposed at test end), of the test
// binary's one headless Chromium (Debian's chromium, or
// $KEYDECK_CHROMIUM) started with the flags this machine needs. A tab the
// test opens from it (chromedp.NewContext) shares its browser context, as
// a second tab of one person's browser. Without a browser the test fails:
// it never skips.
func Browser(t testing.TB) context.Context {
	t.Helper()
	root := sharedBrowser(t)
	ctx, cancel := chromedp.NewContext(root, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("open a tab in chromium: %v", err)
	}
	return ctx
}

// sharedBrowser starts the shared Chromium unless it runs (again when the
// last one ended).
func sharedBrowser(t testing.TB) context.Context {
	t.Helper()
	shared.Lock()
	defer shared.Unlock()
	if shared.ctx != nil && shared.ctx.Err() == nil {
		return shared.ctx
	}
	closeBrowserLocked()
	path := os.Getenv("KEYDECK_CHROMIUM")
	if path == "" {
		var err error
		if path, err = exec.LookPath("chromium"); err != nil {
			t.Fatal("chromium not found: install it (make test does) or set KEYDECK_CHROMIUM")
		}
	}
	dir, err := os.MkdirTemp("", "keydeck-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		chromedp.UserDataDir(dir),
		chromedp.WindowSize(1280, 900),
	)
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelC := chromedp.NewContext(actx)
	shared.ctx, shared.dir = ctx, dir
	shared.cancel = func() { cancelC(); cancelA() }
	if err := chromedp.Do(ctx); err != nil {
		closeBrowserLocked()
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// CloseBrowser stops the shared Chromium, if Browser started one. A
// package whose tests call Browser calls it from TestMain after m.Run (a
// browser left running is killed with the test binary all the same).
func CloseBrowser() {
	shared.Lock()
	defer shared.Unlock()
	closeBrowserLocked()
}

func closeBrowserLocked() {
	if shared.cancel != nil {
		shared.cancel()
	}
	if shared.dir != "" {
		_ = os.RemoveAll(shared.dir)
	}
	shared.ctx, shared.cancel, shared.dir = nil, nil, ""
}
