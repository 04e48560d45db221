// Command screenshots regenerates the pictures the docs show (docs/img) from
// the embedded demo, each in the light and the dark theme, so they never go
// stale: `make screenshots`. It starts the keydeck binary it is given on a
// free loopback port (the embedded demo: no flag but --addr), drives a
// headless Chromium over the DevTools protocol, and writes NAME-light.png
// and NAME-dark.png for every shot of shots.go.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

func main() {
	bin := flag.String("bin", "bin/keydeck", "the keydeck binary to run (make build makes bin/keydeck)")
	out := flag.String("out", "docs/img", "where the PNG files go")
	chromium := flag.String("chromium", os.Getenv("KEYDECK_CHROMIUM"), "Chromium's path (default: chromium on $PATH)")
	only := flag.String("only", "", "take only these shots (names, comma-separated; default: all)")
	settle := flag.Duration("settle", 3*time.Second, "how long a page's live updates run before its picture is taken")
	flag.Parse()
	if err := run(*bin, *out, *chromium, *only, *settle); err != nil {
		fmt.Fprintln(os.Stderr, "screenshots:", err)
		os.Exit(1)
	}
}

func run(bin, out, chromium, only string, settle time.Duration) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	base, stop, err := startDemo(bin)
	if err != nil {
		return err
	}
	defer stop()
	shots, err := resolveShots(base, only)
	if err != nil {
		return err
	}
	b, err := newBrowser(chromium)
	if err != nil {
		return err
	}
	defer b.close()
	for _, s := range shots {
		for _, mode := range []string{"light", "dark"} {
			png, err := b.take(base, s, mode, settle)
			if err != nil {
				return fmt.Errorf("%s (%s): %w", s.Name, mode, err)
			}
			path := filepath.Join(out, s.Name+"-"+mode+".png")
			if err := os.WriteFile(path, png, 0o644); err != nil {
				return err
			}
			fmt.Println(path)
		}
	}
	return nil
}

// startDemo runs bin with the embedded demo on a free port and waits until
// it answers /healthz; stop ends it.
func startDemo(bin string) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, "--addr", addr, "--log-level", "warn")
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return "", nil, fmt.Errorf("start %s: %w (make build makes it)", bin, err)
	}
	stop := func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
	base := "http://" + addr
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if r, err := http.Get(base + "/healthz"); err == nil {
			r.Body.Close()
			if r.StatusCode == http.StatusOK {
				return base, stop, nil
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	stop()
	return "", nil, errors.New("the demo did not answer /healthz within 60s")
}

// withTimeout bounds one step of a picture so a page that never settles
// fails the run instead of hanging it.
func withTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, d)
}
