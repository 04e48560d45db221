package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/redistest"
)

// --metrics-addr serves /metrics alone, without sign-in, while the
// console's own listener keeps /metrics for signed-in identities.
func TestMetricsAddrServesMetricsAlone(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	maddr := fmt.Sprintf("127.0.0.1:%d", redistest.FreePort(t))
	cfg, err := parseFlags("keydeck", []string{"--addr", "127.0.0.1:0", "--redis", "a=" + rs.URL(0), "--trusted-proxy", "10.0.0.0/8",
		"--metrics-addr", maddr, "--metrics-keep=false"}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	ready := make(chan string, 1)
	errc := make(chan error, 1)
	go func() { errc <- run(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), ready) }()
	var addr string
	select {
	case addr = <-ready:
	case err := <-errc:
		t.Fatalf("run: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("console did not start")
	}
	get := func(url string) (int, string) {
		res, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if code, body := get("http://" + maddr + "/metrics"); code != http.StatusOK || !strings.Contains(body, `keydeck_redis_commands_total{conn="a"}`) {
		t.Fatalf("metrics listener: %d %.300s", code, body)
	}
	if code, _ := get("http://" + maddr + "/"); code != http.StatusNotFound {
		t.Fatalf("metrics listener / = %d, want 404", code)
	}
	// Not open (a trusted proxy is configured), and no proxy sent this.
	if code, _ := get("http://" + addr + "/metrics"); code != http.StatusUnauthorized {
		t.Fatalf("console's /metrics, anonymous = %d, want 401", code)
	}
	cancel()
	if err := <-errc; err != nil {
		t.Fatalf("run: %v", err)
	}
	if _, err := http.Get("http://" + maddr + "/metrics"); err == nil {
		t.Fatal("the metrics listener outlived the console")
	}
}
