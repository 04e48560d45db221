// Package server is Keydeck's composition root. From a Config it builds
// everything the console runs on — the connections and their packs,
// sign-in, the action runner and audit log, the live hub, the statistics
// sweepers, the leaderboard index, the keyspace key watch, the handlers and
// their echo router — starts the background work under one context, and
// awaits all of it when the console stops. cmd/web's run and every test
// fixture build the console here, so what is tested is what runs.
package server

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/handlers"
	"github.com/keydeck/keydeck/internal/clock"
	"github.com/keydeck/keydeck/internal/lease"
	"github.com/keydeck/keydeck/internal/live"
	"github.com/keydeck/keydeck/internal/metrics"
	"github.com/keydeck/keydeck/internal/people"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/redisview/bulk"
	"github.com/keydeck/keydeck/redisview/leaderboard"
	"github.com/keydeck/keydeck/redisview/limits"
	"github.com/keydeck/keydeck/redisview/quotas"
	"github.com/keydeck/keydeck/redisview/scanbudget"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/redisview/search"
	"github.com/keydeck/keydeck/redisview/stats"
	"github.com/keydeck/keydeck/redisview/vertique"
)

// The defaults of the workers' intervals (Config).
const (
	defaultLimitsLinger  = 30 * time.Second
	defaultQuotaInterval = time.Second
	defaultQuotaLinger   = time.Minute
)

// Config is one console: the connections, who may sign in, and the options.
// Zero values take the defaults noted.
type Config struct {
	// Conns are the Redis servers to watch (at least one).
	Conns []redisview.ConnConfig
	// Packs are the schema packs in use (nil: schema.Builtin()); PackFor
	// forces a pack on a connection (connection → pack name) instead of
	// detecting it.
	Packs   []*schema.Pack
	PackFor map[string]string
	// Demo makes every page say it shows the embedded demo.
	Demo bool
	// Vertique is the secret the vertique page derives bucket keys with
	// (never shown, logged or sent); zero: the page says how to give one.
	Vertique handlers.VertiqueSecret

	// Addr is where the console will listen. Without sign-in (no users and
	// no trusted proxy) everyone is admin, so an address other than
	// loopback is refused unless Auth.ReadOnly. "" skips the check (a
	// test's own server on loopback).
	Addr string
	// Auth is sign-in and roles. Unset, Secret is the one shared in the
	// audit Redis (or a random one when it cannot be stored), and Limiter
	// and Sessions keep their state in the audit Redis; Open is worked out
	// (no users and no trusted proxy).
	Auth handlers.Auth
	// UsersFile, when set, is loaded into Auth.Users (unless the caller
	// loaded it there already, from this file) and watched: re-read
	// when it changes and whenever ReloadUsers receives (SIGHUP).
	UsersFile   string
	ReloadUsers <-chan struct{}
	// UsersPoll is how often the users file is read for changes (default
	// 1s, on Clock).
	UsersPoll time.Duration

	// Audit is where the audit stream, the sign-in counters, ended
	// sessions and the shared secret live: "NAME/DB" (default: database 15
	// of the first connection, which the eIsland layout leaves free).
	// AuditClient, when set, is used instead.
	Audit       string
	AuditClient *redis.Client
	// AuditMaxLen caps the audit stream (XADD … MAXLEN ~); 0: no cap.
	AuditMaxLen int64
	// Replicas: other Keydeck processes share this audit Redis (cmd/web:
	// --audit given), and share the background work through it (see
	// replicas.go): each database's statistics sweep and each
	// connection's health probe run on one replica at a time, under a
	// lease. Off, this process does all of it itself.
	Replicas bool

	// PollInterval is how often a live topic reads Redis (default 1s);
	// MinGap how soon a keyspace notification may poll it again (default
	// max(100ms, PollInterval/5)).
	PollInterval, MinGap time.Duration
	// MonitorInterval is how often each connection is probed (default 500ms).
	MonitorInterval time.Duration
	// Sweep is one database sweep's budget; SweepLinger how long a sweeper
	// outlives its last viewer (default 2m).
	Sweep       stats.SweepBudget
	SweepLinger time.Duration
	// SearchRate is each connection's scan budget, in keys per second:
	// every scan people start on it (live searches, search requests, the
	// user page's scans) together, shared fairly between identities
	// (default: Sweep.KeysPerSec, so searching costs Redis no more than a
	// sweep does).
	SearchRate int
	Bulk       bulk.Options // the bulk jobs' Rate, Batch, UndoKeys, UndoBytes (zero: bulk's defaults)

	// MetricsBans runs /metrics's keeper (metrics.Keeper) for the one
	// figure no worker keeps: each ban list's health, read every
	// MetricsInterval (default 30s). MetricsKeep makes the keeper also hold
	// the workers /metrics reports on (each connection's limit sweep and
	// quota walk, the statistics sweep of each database its pack names)
	// while nobody has a page open, at their own budgets; without it
	// /metrics reports what pages started.
	MetricsBans, MetricsKeep bool
	MetricsInterval          time.Duration

	// ConsoleAllowDangerous is --console-allow-dangerous (console.go).
	ConsoleAllowDangerous bool

	// LimitsLinger is how long a connection's limit sweep outlives its
	// last viewer (default 30s); QuotaInterval how often a quota walker
	// steps and QuotaLinger how long it outlives its last viewer (defaults
	// 1s and 1m).
	LimitsLinger, QuotaInterval, QuotaLinger time.Duration
	// LimitsBudget is each connection's limit sweep budget (zero fields:
	// limits.DefaultBudget's).
	LimitsBudget limits.Budget

	// Clock is the one clock every background worker runs on: connection
	// monitors and pack detection, the keyspace watchers (through the
	// connections), the live hub, the statistics sweepers, the limit
	// sweeps' pool, the quota walkers (and pages' waits for their first
	// read), the leaderboard index, the users file poll, the scan
	// budgets, the metrics keeper, sign-in limits, sessions and tokens
	// (default: the wall clock). Tests give a clock.Fake and advance it
	// instead of waiting.
	Clock clock.Clock
	// Now is the clock of actions (preview age, audit times, what an undo
	// would bring back after its TTL), of sign-in sessions and of the
	// pages' times; default Clock.Now.
	Now func() time.Time
}

func (c Config) withDefaults() Config {
	c.Clock = clock.Or(c.Clock)
	if c.Now == nil {
		c.Now = c.Clock.Now
	}
	if c.UsersPoll <= 0 {
		c.UsersPoll = time.Second
	}
	if c.LimitsLinger <= 0 {
		c.LimitsLinger = defaultLimitsLinger
	}
	if c.QuotaInterval <= 0 {
		c.QuotaInterval = defaultQuotaInterval
	}
	if c.QuotaLinger <= 0 {
		c.QuotaLinger = defaultQuotaLinger
	}
	if c.Packs == nil {
		c.Packs = schema.Builtin()
	}
	if c.PollInterval <= 0 {
		c.PollInterval = time.Second
	}
	if c.MinGap <= 0 {
		c.MinGap = max(100*time.Millisecond, c.PollInterval/5)
	}
	if c.MonitorInterval <= 0 {
		c.MonitorInterval = 500 * time.Millisecond
	}
	if c.SweepLinger <= 0 {
		c.SweepLinger = 2 * time.Minute
	}
	if c.SearchRate <= 0 {
		c.SearchRate = c.Sweep.KeysPerSec
		if c.SearchRate <= 0 {
			c.SearchRate = stats.DefaultSweepBudget.KeysPerSec
		}
	}
	return c
}

// Server is a console built from a Config, its background work running.
type Server struct {
	cfg     Config
	log     *slog.Logger
	reg     *redisview.Registry
	actions *action.Runner
	app     *handlers.App
	handler *echo.Echo
	budgets map[string]*scanbudget.Budget // per connection
	share   *lease.Shared                 // nil: no replicas (Config.Replicas)

	ctx    context.Context
	cancel context.CancelFunc
	// The background work, in the order it is awaited.
	hub      *live.Hub
	sweepers *stats.Sweepers
	limits   *limits.Pool
	quotas   *quotas.Walkers
	boards   *leaderboard.Index
	watch    *redisview.KeyWatch
	metrics  http.Handler
	keeper   sync.WaitGroup // metrics.Keeper
	bg       sync.WaitGroup // monitors (and their pack detections), users file watch
	close    sync.Once
}

// Start builds the console and starts its background work under ctx: the
// connection monitors, the users file watch, the live hub's pollers, the
// sweepers, the leaderboard index's scans and the keyspace listeners. When
// ctx ends the work stops; Close (or Serve) awaits it.
func Start(ctx context.Context, cfg Config, log *slog.Logger) (*Server, error) {
	cfg = cfg.withDefaults()
	if len(cfg.Conns) == 0 {
		return nil, errors.New("no Redis connection to watch")
	}
	reg, err := redisview.NewRegistry(cfg.Conns, log, redisview.WithClock(cfg.Clock))
	if err != nil {
		return nil, err
	}
	if err := reg.UsePacks(cfg.Packs, cfg.PackFor); err != nil {
		reg.Close()
		return nil, err
	}
	auth, audit, err := setupAuth(ctx, cfg, reg, log)
	if err != nil {
		reg.Close()
		return nil, err
	}
	s := &Server{cfg: cfg, log: log, reg: reg,
		actions: action.New(audit, action.Options{MaxLen: cfg.AuditMaxLen, Secret: auth.Secret, ReadOnly: auth.ReadOnly, Now: cfg.Now,
			Kinds: consoleKinds(cfg)})}
	s.ctx, s.cancel = context.WithCancel(ctx)
	if cfg.Replicas {
		s.share = &lease.Shared{Client: audit, ID: lease.NewID(), Clock: cfg.Clock, Log: log.With("component", "replicas")}
	}

	if s.share == nil {
		s.bg.Go(s.monitor)
	}
	if auth.Users != nil && cfg.UsersFile != "" {
		s.bg.Go(func() { auth.Users.Watch(s.ctx, cfg.UsersPoll, cfg.ReloadUsers, log.With("component", "users")) })
	}
	s.hub = live.New(s.ctx, log.With("component", "hub"), cfg.PollInterval, live.WithClock(cfg.Clock))
	// Keyspace notifications may kick a topic; it still polls at most this often.
	s.hub.MinGap = cfg.MinGap
	s.sweepers = stats.NewSweepers(s.ctx, cfg.Sweep, cfg.SweepLinger, log.With("component", "sweep"), stats.WithClock(cfg.Clock),
		stats.WithShare(s.share))
	s.boards = leaderboard.NewIndex(s.ctx, leaderboard.WithClock(cfg.Clock))
	// The Rate limits and Locks pages read one sweep per connection; it
	// keeps running LimitsLinger after the last viewer leaves, so flipping
	// between the two pages does not restart it. The quotas pages read one
	// walk per connection the same way.
	s.limits = limits.NewPool(s.ctx, cfg.LimitsBudget, cfg.LimitsLinger, limits.WithClock(cfg.Clock))
	s.quotas = quotas.NewWalkers(s.ctx, quotas.DefaultBudget, cfg.QuotaInterval, cfg.QuotaLinger, cfg.Now, quotas.WithClock(cfg.Clock))
	// Keyspace notifications (where the server publishes them) refresh the
	// live views of a key at once instead of at their next tick.
	s.watch = &redisview.KeyWatch{}
	if s.share == nil {
		for _, c := range reg.All() {
			s.watch.Listen(s.ctx, c, s.hub.Kick)
		}
	} else {
		// Replicas: each connection's probe and notifications under its
		// watch lease (replicas.go).
		s.bg.Go(s.monitor)
	}

	// One scan budget per connection, kept for the console's life so
	// that each identity's account survives its reconnects.
	budgets := map[string]*scanbudget.Budget{}
	for _, c := range reg.All() {
		budgets[c.Name] = scanbudget.New(float64(cfg.SearchRate), cfg.Clock)
	}

	s.handler = echo.New()
	s.handler.HideBanner, s.handler.HidePort = true, true
	s.app = handlers.New(handlers.Deps{Conns: reg, Hub: s.hub, Sweepers: s.sweepers, Leaderboards: s.boards, KeyWatch: s.watch,
		Actions: s.actions, Audit: s.actions, Log: log, Demo: cfg.Demo, Auth: auth, Ctx: s.ctx, Now: cfg.Now,
		Vertique: cfg.Vertique, ScanBudgets: budgets,
		LimitSweeps: s.limits, QuotaWalkers: s.quotas, VertiqueInventory: &vertique.Cache{},
		UserStates:     search.NewUserHandoffs(search.DefaultUserCadence.Continue, cfg.Now),
		ConsoleHistory: consoleHistory(audit), ConsoleDangerous: cfg.ConsoleAllowDangerous, Bulk: s.startBulk(cfg, audit)})
	s.budgets = budgets
	s.app.Routes(s.handler)
	s.startMetrics()
	return s, nil
}

// startMetrics serves /metrics on the console's listener (any signed-in
// identity; anonymous: 401) and starts its keeper: a scrape reads what the
// workers hold, and sends no Redis command.
func (s *Server) startMetrics() {
	bans := &metrics.BanHealth{}
	s.metrics = metrics.Handler(metrics.New(metrics.Sources{Conns: s.reg, Sweeps: s.sweepers, Limits: s.limits,
		Quotas: s.quotas, Bans: bans, Hub: s.hub, Actions: s.actions, Now: s.cfg.Now}))
	s.handler.GET(metrics.Path, echo.WrapHandler(s.metrics), s.app.RequireMachine(action.Viewer))
	if !s.cfg.MetricsBans && !s.cfg.MetricsKeep {
		return
	}
	k := &metrics.Keeper{Conns: s.reg, Sweeps: s.sweepers, Limits: s.limits, Quotas: s.quotas, Bans: bans,
		Hold: s.cfg.MetricsKeep, Interval: s.cfg.MetricsInterval, Clock: s.cfg.Clock}
	// Awaited before the pools it acquires from (see Close).
	s.keeper.Go(func() { s.runKeeper(k) })
}

// MetricsHandler serves the Prometheus exposition alone, unguarded: for a
// listener of its own (--metrics-addr).
func (s *Server) MetricsHandler() http.Handler { return s.metrics }

// ScanBudgetStats is a snapshot of conn's scan budget (who waits, who
// was granted what).
func (s *Server) ScanBudgetStats(conn string) scanbudget.Stats { return s.budgets[conn].Stats() }

// Handler serves the console.
func (s *Server) Handler() http.Handler { return s.handler }

// RouteTable is every route the console serves.
func (s *Server) RouteTable() []handlers.Route { return s.app.RouteTable() }

// Registry holds the console's connections.
func (s *Server) Registry() *redisview.Registry { return s.reg }

// Actions is the console's action runner (its audit log included).
func (s *Server) Actions() *action.Runner { return s.actions }

// Close stops the background work, awaits every part of it, and closes the
// connections. It is safe to call more than once.
func (s *Server) Close() {
	s.close.Do(func() {
		s.cancel()
		s.keeper.Wait()
		s.hub.Wait()
		s.limits.Wait()
		s.quotas.Wait()
		s.sweepers.Wait()
		s.boards.Wait()
		s.watch.Wait()
		s.bg.Wait()
		s.reg.Close()
	})
}

// Serve answers HTTP on ln until the context given to Start ends, then shuts
// down gracefully and Closes. Websockets are hijacked, so the HTTP server's
// Shutdown does not wait for them: they close with that context.
func (s *Server) Serve(ln net.Listener) error {
	defer s.Close()
	srv := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: 10 * time.Second,
		// Bodies are tiny (see handlers' limitBody); a slow one must not
		// hold a goroutine. Websockets set their own deadlines once hijacked.
		ReadTimeout: 30 * time.Second,
		IdleTimeout: 2 * time.Minute,
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-s.ctx.Done():
	}
	s.log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := srv.Shutdown(sctx)
	<-errc
	return err
}

// setupAuth applies the safe defaults and fills in sign-in: the users, the
// signing secret shared by replicas, the login limiter and the session
// store, all beside the audit log, whose client it returns.
func setupAuth(ctx context.Context, cfg Config, reg *redisview.Registry, log *slog.Logger) (handlers.Auth, *redis.Client, error) {
	auth := cfg.Auth
	if cfg.UsersFile != "" && auth.Users == nil {
		users, err := people.LoadUsers(cfg.UsersFile, people.WithClock(cfg.Clock))
		if err != nil {
			return auth, nil, err
		}
		auth.Users = users
	}
	if auth.Users == nil && len(auth.TrustedProxies) == 0 {
		if cfg.Addr != "" && !auth.ReadOnly {
			host, _, _ := net.SplitHostPort(cfg.Addr)
			if !isLoopback(host) {
				return auth, nil, fmt.Errorf("refusing to serve %s without sign-in: anyone who could reach it would be admin; give --users FILE (or --trusted-proxy CIDR), or add --read-only", cfg.Addr)
			}
		}
		auth.Open = true
	}
	audit := cfg.AuditClient
	if audit == nil {
		var err error
		if audit, err = auditTarget(ctx, cfg.Audit, reg, log); err != nil {
			return auth, nil, err
		}
	}
	if len(auth.Secret) == 0 {
		sctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		secret, err := people.SharedSecret(sctx, audit, "keydeck:session-secret")
		cancel()
		if err != nil {
			secret = make([]byte, 32)
			_, _ = rand.Read(secret)
			log.Warn("no --session-secret and the audit Redis could not store one: sessions last only as long as this process and are not shared with other replicas", "err", err)
		}
		auth.Secret = secret
	}
	if auth.Limiter == nil {
		auth.Limiter = people.NewLoginLimiter(audit, people.DefaultLoginPolicy, people.WithClock(cfg.Clock))
	}
	if auth.Sessions == nil {
		// Ended sessions are recorded beside the login counters, so a
		// sign-out on one replica holds on all of them.
		auth.Sessions = people.NewSessionStore(audit, people.WithClock(cfg.Clock))
	}
	if auth.Tokens == nil && auth.Users != nil {
		// API tokens beside the sessions: revoked on every replica alike.
		auth.Tokens = people.NewTokenStore(audit, people.WithClock(cfg.Clock))
	}
	if auth.Tokens != nil && auth.Users != nil {
		// An account out of the users file for people.GoneGrace loses its
		// tokens for good (one back sooner keeps them).
		tokens := auth.Tokens
		auth.Users.OnRemoved(func(names []string) {
			for _, n := range names {
				ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
				k, err := tokens.RevokeOwner(ctx, n)
				cancel()
				if err != nil {
					log.Error("the API tokens of an account removed from the users file could not be revoked now; they are refused while it is absent", "user", n, "err", err)
				} else if k > 0 {
					log.Warn("API tokens revoked: their account left the users file", "user", n, "tokens", k)
				}
			}
		})
	}
	return auth, audit, nil
}

// auditTarget is the client of NAME/DB, by default database 15 of the
// first connection (the eIsland layout leaves it free).
// The connection's kind is settled first (one probe; the monitor has not
// run yet): a cluster found later would close the client chosen here.
func auditTarget(ctx context.Context, spec string, reg *redisview.Registry, log *slog.Logger) (*redis.Client, error) {
	name, db := reg.All()[0].Name, 15
	if spec != "" {
		n, d, _ := strings.Cut(spec, "/")
		idx, err := route.ParseDB(d)
		if err != nil {
			return nil, fmt.Errorf("--audit %s: %w", spec, err)
		}
		name, db = n, idx
	}
	c, err := reg.Get(name)
	if err != nil {
		return nil, fmt.Errorf("--audit %s: %w", spec, err)
	}
	// The audit stream, sessions and confirmations live on one server (a
	// sentinel's primary is one): a cluster client cannot hold them.
	dctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	if err := c.Detect(dctx); err != nil {
		// Down at start: the monitor reports it; the audit waits for it.
		log.Warn("audit Redis not reachable at start", "conn", name, "err", c.SafeErr(err))
	}
	cancel()
	cl, ok := c.DB(db).(*redis.Client)
	if !ok || c.IsCluster() {
		return nil, fmt.Errorf("--audit %s: connection %q is a Redis Cluster; name a standalone or sentinel connection", spec, name)
	}
	return cl, nil
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}
