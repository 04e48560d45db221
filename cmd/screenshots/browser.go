package main

import (
	"context"
	"os"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// browser is one headless Chromium with one tab, reused for every picture.
type browser struct {
	tab    context.Context
	cancel func()
	dir    string
}

func newBrowser(path string) (*browser, error) {
	dir, err := os.MkdirTemp("", "keydeck-screenshots-")
	if err != nil {
		return nil, err
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.NoFirstRun,
		chromedp.UserDataDir(dir),
	)
	if path != "" {
		opts = append(opts, chromedp.ExecPath(path))
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	tab, cancelT := chromedp.NewContext(actx)
	b := &browser{tab: tab, dir: dir, cancel: func() { cancelT(); cancelA() }}
	if err := chromedp.Do(tab); err != nil {
		b.close()
		return nil, err
	}
	return b, nil
}

func (b *browser) close() {
	b.cancel()
	_ = os.RemoveAll(b.dir)
}

// take opens s in the colour scheme mode ("light" or "dark", as the
// system's preference the theme follows by default), lets its live
// updates run for settle, and returns a picture of the window.
func (b *browser) take(base string, s shot, mode string, settle time.Duration) ([]byte, error) {
	ctx, cancel := withTimeout(b.tab, settle+45*time.Second)
	defer cancel()
	w, h, phone := int64(1300), int64(1000), []chromedp.EmulateViewportOption(nil)
	if s.Phone {
		w, h = 390, 844
		phone = []chromedp.EmulateViewportOption{chromedp.EmulateMobile, chromedp.EmulateTouch, chromedp.EmulateScale(2)}
	}
	err := chromedp.Do(ctx,
		chromedp.EmulateViewport(w, h, phone...),
		colourScheme(mode),
		chromedp.Navigate(base+s.Path),
		chromedp.WaitReady(chromedp.CSS("body")),
		chromedp.Sleep(settle),
	)
	if err != nil {
		return nil, err
	}
	return chromedp.Run(ctx, chromedp.CaptureScreenshot())
}

// colourScheme emulates the system's prefers-color-scheme.
func colourScheme(mode string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: mode}},
		})
		return err
	})
}
