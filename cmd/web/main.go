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
	"sync"
	"syscall"

	"github.com/keydeck/keydeck/handlers"
	"github.com/keydeck/keydeck/internal/demo"
	"github.com/keydeck/keydeck/internal/people"
	"github.com/keydeck/keydeck/internal/server"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/schema"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "hash-password" {
		if err := hashPassword(os.Stdin, os.Stdout, os.Stderr); err != nil {
			fmt.Fprintf(os.Stderr, "keydeck hash-password: %v\n", err)
			os.Exit(exitStatus(err))
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
		var input inputError
		if errors.As(err, &input) {
			fmt.Fprintf(os.Stderr, "keydeck: %v\n", err)
		} else {
			log.Error("keydeck stopped", "err", err)
		}
		os.Exit(exitStatus(err))
	}
}

// inputError is an input refused at start-up (a file or secret a flag
// names, a password to hash): like a bad flag it is one line naming the
// input, and exit status 2, before any Redis is connected to.
type inputError struct{ err error }

func (e inputError) Error() string { return e.err.Error() }
func (e inputError) Unwrap() error { return e.err }

// exitStatus is 2 for an inputError, 1 for any other failure.
func exitStatus(err error) int {
	var input inputError
	if errors.As(err, &input) {
		return 2
	}
	return 1
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
  --sweep-cpu PERCENT     share of one Redis core one database's statistics sweep
                          may cost while it runs, by its cost model (default 1)
  --sweep-rate N          at most this many keys per second one sweep reads
                          (default 20000)
  --sweep-sample N        keys of each family a pass reads whole, for memory and
                          type; the rest are counted from their names (default 2000)
  --sweep-count N         SCAN COUNT of one sweep step (default 200)
  --search-rate N         keys per second all searches and user-page scans of one
                          connection may read together, shared fairly between users
                          (default 1600)
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
  --audit NAME/DB         where the audit stream lives (default: first connection, db 15);
                          given, replicas on the same audit Redis share their sweeps
                          and probes through leases there
  --audit-maxlen N        approximate cap of the audit stream (default 100000)

Subcommands:
  keydeck hash-password   print a bcrypt hash of a password for the users file

Environment:
  KEYDECK_REDIS           "name=url,name=url", used when no --redis flag is given
`

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
	// Inputs first: a mistake in one is told before anything starts.
	vsecret, err := vertiqueSecret(cfg, os.Getenv, os.ReadFile)
	if err != nil {
		return inputError{err}
	}
	var users *people.Users
	if cfg.UsersFile != "" {
		if users, err = people.LoadUsers(cfg.UsersFile); err != nil {
			return inputError{fmt.Errorf("invalid value for flag --users: %w", err)}
		}
		log.Info("users file loaded", "path", cfg.UsersFile, "users", users.Len())
	}
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
		if cfg.demoStarted != nil {
			cfg.demoStarted(d.Connections())
		}
		log.Info("running the embedded demo: in-process Redis with simulated traffic")
	}
	packs, err := loadPacks(cfg.PackFiles)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	reload := make(chan struct{}, 1)
	var hupDone sync.WaitGroup
	defer func() { cancel(); hupDone.Wait() }()
	hupDone.Go(func() { forwardHUP(ctx, hup, reload, cfg.UsersFile != "", log) })

	srv, err := server.Start(ctx, server.Config{
		Conns: conns, Packs: packs, PackFor: cfg.PackFor, Demo: cfg.Demo(), Addr: cfg.Addr, Vertique: vsecret,
		Auth: handlers.Auth{SessionTTL: cfg.SessionTTL, Secret: []byte(cfg.SessionSecret), ReadOnly: cfg.ReadOnly,
			TrustedProxies: cfg.TrustedProxies, UserHeader: cfg.ProxyUser, EmailHeader: cfg.ProxyEmail, RoleHeader: cfg.ProxyRole,
			ProxyMatch: cfg.ProxyMatch, AllowedHosts: cfg.AllowedHosts, ReadyzDetail: cfg.ReadyzDetail, Users: users},
		UsersFile: cfg.UsersFile, ReloadUsers: reload,
		Audit: cfg.Audit, AuditMaxLen: cfg.AuditMaxLen, Replicas: cfg.Audit != "",
		PollInterval: cfg.PollInterval, Sweep: cfg.Sweep, SearchRate: cfg.SearchRate, MetricsBans: true, MetricsKeep: cfg.MetricsKeep || cfg.Demo(),
		ConsoleAllowDangerous: cfg.ConsoleAllowDangerous, Bulk: cfg.Bulk,
	}, log)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		srv.Close()
		return err
	}
	if cfg.MetricsAddr != "" {
		wait, err := serveMetrics(ctx, cfg.MetricsAddr, srv.MetricsHandler(), log)
		if err != nil {
			ln.Close()
			srv.Close()
			return fmt.Errorf("--metrics-addr: %w", err)
		}
		defer wait()
	}
	log.Info("keydeck listening", "url", "http://"+ln.Addr().String(), "connections", len(conns))
	if ready != nil {
		ready <- ln.Addr().String()
	}
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
