// Command web runs the Keydeck console.
package main

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/handlers"
	"github.com/keydeck/keydeck/internal/demo"
	"github.com/keydeck/keydeck/internal/live"
	"github.com/keydeck/keydeck/internal/signin"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/redisview/leaderboard"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/redisview/stats"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "hash-password" {
		if err := hashPassword(os.Stdin, os.Stdout, os.Stderr); err != nil {
			fmt.Fprintf(os.Stderr, "keydeck hash-password: %v\n", err)
			os.Exit(1)
		}
		return
	}
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
  --pack FILE             load a schema pack (YAML) in addition to the built-in
                          eisland, gateway and vertique packs; repeatable
  --pack-for NAME=PACK    use pack PACK for connection NAME instead of detecting it
  --sweep-rate N          keys per second one database's statistics sweep may read
                          (default 2000)
  --sweep-count N         SCAN COUNT of one sweep step (default 200)
  --users FILE            users who may sign in (YAML; see README), re-read when it
                          changes and on SIGHUP; without it, and without
                          --trusted-proxy, Keydeck serves only loopback
                          addresses, where everyone is admin
  --session-secret S      signs sessions and CSRF tokens (≥ 32 bytes; also
                          KEYDECK_SESSION_SECRET); default: one stored in the audit Redis
  --session-ttl DUR       how long a sign-in lasts (default 12h)
  --read-only             disable every action for every role
  --trusted-proxy CIDR    trust identity headers from this proxy; repeatable
  --proxy-user-header H   (default X-Forwarded-User)
  --proxy-email-header H  (default X-Forwarded-Email)
  --proxy-role-header H   role header from the proxy (default: users file, else viewer)
  --proxy-match name|email
                          the one proxy header that finds the account in the users
                          file (default name)
  --allowed-host NAME     without sign-in, also answer to this Host name (loopback
                          names always work); repeatable
  --readyz-detail         name the connections that are down in /readyz for anonymous
                          callers too (default: only for signed-in users)
  --audit NAME/DB         where the audit stream lives (default: first connection, db 15)
  --audit-maxlen N        approximate cap of the audit stream (default 100000)

Subcommands:
  keydeck hash-password   print a bcrypt hash of a password for the users file

Environment:
  KEYDECK_REDIS           "name=url,name=url", used when no --redis flag is given
`

// setupAuth applies the safe defaults and builds sign-in: users, the
// signing secret shared by replicas, the login limiter, and the audit target.
func setupAuth(ctx context.Context, cfg Config, reg *redisview.Registry, log *slog.Logger) (handlers.Auth, *redis.Client, error) {
	auth := handlers.Auth{SessionTTL: cfg.SessionTTL, ReadOnly: cfg.ReadOnly, TrustedProxies: cfg.TrustedProxies,
		UserHeader: cfg.ProxyUser, EmailHeader: cfg.ProxyEmail, RoleHeader: cfg.ProxyRole, ProxyMatch: cfg.ProxyMatch, AllowedHosts: cfg.AllowedHosts, ReadyzDetail: cfg.ReadyzDetail}
	if cfg.UsersFile != "" {
		users, err := handlers.LoadUsers(cfg.UsersFile)
		if err != nil {
			return auth, nil, err
		}
		auth.Users = users
	}
	if auth.Users == nil && len(cfg.TrustedProxies) == 0 {
		host, _, _ := net.SplitHostPort(cfg.Addr)
		if !isLoopback(host) && !cfg.ReadOnly {
			return auth, nil, fmt.Errorf("refusing to serve %s without sign-in: anyone who could reach it would be admin; give --users FILE (or --trusted-proxy CIDR), or add --read-only", cfg.Addr)
		}
		auth.Open = true
	}

	audit, err := auditTarget(cfg, reg)
	if err != nil {
		return auth, nil, err
	}
	secret := []byte(cfg.SessionSecret)
	if len(secret) == 0 {
		sctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		secret, err = signin.SharedSecret(sctx, audit, "keydeck:session-secret")
		cancel()
		if err != nil {
			secret = make([]byte, 32)
			_, _ = rand.Read(secret)
			log.Warn("no --session-secret and the audit Redis could not store one: sessions last only as long as this process and are not shared with other replicas", "err", err)
		}
	}
	auth.Secret = secret
	auth.Limiter = signin.NewLoginLimiter(audit, 5, 20, 15*time.Minute)
	// Ended sessions are recorded beside the login counters, so a sign-out
	// on one replica holds on all of them.
	auth.Sessions = signin.NewSessionStore(audit)
	return auth, audit, nil
}

// auditTarget is the client of --audit NAME/DB, default database 15 of the
// first connection (the eIsland layout leaves it free).
func auditTarget(cfg Config, reg *redisview.Registry) (*redis.Client, error) {
	name, db := reg.All()[0].Name, 15
	if cfg.Audit != "" {
		n, d, _ := strings.Cut(cfg.Audit, "/")
		name = n
		db, _ = strconv.Atoi(d)
	}
	c, err := reg.Get(name)
	if err != nil {
		return nil, fmt.Errorf("--audit %s: %w", cfg.Audit, err)
	}
	return c.DB(db), nil
}

// forwardHUP turns SIGHUP into a reload of the users file, logged either way.
func forwardHUP(ctx context.Context, hup <-chan os.Signal, reload chan<- struct{}, haveUsers bool, log *slog.Logger) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			if !haveUsers {
				log.Info("SIGHUP: no --users file to reload; ignored")
				continue
			}
			log.Info("SIGHUP: reloading the users file")
			select {
			case reload <- struct{}{}:
			default: // a reload is already pending
			}
		}
	}
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// loadPacks returns the built-in packs plus those in files; a malformed pack
// stops start-up with its file, line and what is wrong.
func loadPacks(files []string) ([]*schema.Pack, error) {
	packs := schema.Builtin()
	for _, f := range files {
		p, err := schema.LoadFile(f)
		if err != nil {
			return nil, err
		}
		for i, q := range packs {
			if q.Name == p.Name { // a user's pack replaces the built-in one of that name
				packs = append(packs[:i], packs[i+1:]...)
				break
			}
		}
		packs = append(packs, p)
	}
	return packs, nil
}

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
	// SIGHUP reloads the users file; left to its default it would end the
	// process without a word.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
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
	packs, err := loadPacks(cfg.PackFiles)
	if err != nil {
		return err
	}
	reg, err := redisview.NewRegistry(conns, log)
	if err != nil {
		return err
	}
	defer reg.Close()
	if err := reg.UsePacks(packs, cfg.PackFor); err != nil {
		return err
	}

	auth, auditClient, err := setupAuth(ctx, cfg, reg, log)
	if err != nil {
		return err
	}
	actions := action.New(auditClient, action.Options{MaxLen: cfg.AuditMaxLen, Secret: auth.Secret, ReadOnly: cfg.ReadOnly})

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Background work that must not outlive run: cancelled, then awaited.
	var bg sync.WaitGroup
	defer func() { cancel(); bg.Wait() }()
	reload := make(chan struct{}, 1)
	bg.Go(func() { forwardHUP(ctx, hup, reload, auth.Users != nil, log) })
	if auth.Users != nil {
		bg.Go(func() { auth.Users.Watch(ctx, time.Second, reload, log.With("component", "users")) })
	}
	go reg.Monitor(ctx, 500*time.Millisecond)
	hub := live.New(ctx, log.With("component", "hub"), cfg.PollInterval)
	// Keyspace notifications may kick a topic; it still polls at most this often.
	hub.MinGap = max(100*time.Millisecond, cfg.PollInterval/5)
	sweepers := stats.NewSweepers(ctx, cfg.Sweep, 2*time.Minute, log.With("component", "sweep"))
	boards := leaderboard.NewIndex(ctx)
	// Keyspace notifications (where the server publishes them) refresh the
	// live views of a key at once instead of at their next tick.
	var watch redisview.KeyWatch
	for _, c := range reg.All() {
		watch.Listen(ctx, c, hub.Kick)
	}
	defer func() { cancel(); boards.Wait(); watch.Wait() }()

	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	app := handlers.New(handlers.Deps{Conns: reg, Hub: hub, Sweepers: sweepers, Leaderboards: boards, KeyWatch: &watch,
		Log: log, Demo: cfg.Demo(), Auth: auth, Actions: actions, Ctx: ctx})
	app.Routes(e)

	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           e,
		ReadHeaderTimeout: 10 * time.Second,
		// Bodies are tiny (limitBody); a slow one must not hold a goroutine.
		// Websockets set their own deadlines once hijacked.
		ReadTimeout: 30 * time.Second,
		IdleTimeout: 2 * time.Minute,
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
	sweepers.Wait()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}
