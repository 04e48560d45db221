// Command web runs the Keydeck console.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/keydeck/keydeck/handlers"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/demo"
	"github.com/keydeck/keydeck/redisview/live"
)

func main() {
	cfg, err := parseFlags("keydeck", os.Args[1:], os.Getenv)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(os.Stdout, usage)
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "keydeck: %v (see --help)\n", err)
		os.Exit(2)
	}
	log := newLogger(cfg)
	redisview.SetDriverLogger(log)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg, log, nil); err != nil {
		log.Error("keydeck stopped", "err", err)
		os.Exit(1)
	}
}

const usage = `Keydeck — a live operations console for Redis.

Usage: keydeck [flags]

With no --redis flag (and no KEYDECK_REDIS), Keydeck runs an embedded demo.

Flags:
  --addr HOST:PORT        listen address (default 127.0.0.1:8080)
  --redis NAME=URL        a Redis server to watch; repeatable. URL schemes:
                          redis://[user:pass@]host:port[/db], rediss://…, unix:///path.sock
  --poll-interval DUR     how often live views read Redis (default 1s; 100ms–1m)
  --log-format text|json  (default text)
  --log-level LEVEL       debug, info, warn or error (default info)

Environment:
  KEYDECK_REDIS           "name=url,name=url", used when no --redis flag is given
`

func newLogger(cfg Config) *slog.Logger {
	var lvl slog.Level
	_ = lvl.UnmarshalText([]byte(cfg.LogLevel))
	opts := &slog.HandlerOptions{Level: lvl}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(os.Stderr, opts))
	}
	return slog.New(slog.NewTextHandler(os.Stderr, opts))
}

// run serves until ctx is cancelled, then shuts down gracefully. If ready is
// not nil it receives the bound address once the server listens (tests use
// port 0).
func run(ctx context.Context, cfg Config, log *slog.Logger, ready chan<- string) error {
	conns := cfg.Conns
	if cfg.Demo() {
		d, err := demo.Start(ctx, log.With("component", "demo"))
		if err != nil {
			return fmt.Errorf("start embedded demo: %w", err)
		}
		defer d.Close()
		for _, c := range d.Connections() {
			conns = append(conns, redisview.ConnConfig{Name: c.Name, URL: c.URL})
		}
		log.Info("running the embedded demo: in-process Redis with simulated traffic")
	}
	reg, err := redisview.NewRegistry(conns, log)
	if err != nil {
		return err
	}
	defer reg.Close()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go reg.Monitor(ctx, 500*time.Millisecond)
	hub := live.New(ctx, log.With("component", "hub"), cfg.PollInterval)

	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	app := handlers.New(handlers.Deps{Conns: reg, Hub: hub, Log: log, Demo: cfg.Demo()})
	app.Routes(e)

	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           e,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
	log.Info("keydeck listening", "url", "http://"+ln.Addr().String(), "connections", len(conns))
	if ready != nil {
		ready <- ln.Addr().String()
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()

	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down")
	cancel()
	sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer scancel()
	// Websockets are hijacked, so Shutdown does not wait for them; the hub's
	// context is already cancelled, which ends their pollers.
	err = srv.Shutdown(sctx)
	hub.Wait()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}
