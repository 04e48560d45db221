package redisview

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/clock"

	"github.com/keydeck/keydeck/redisview/schema"
)

// ErrUnknownConnection is returned for a connection name that is not configured.
var ErrUnknownConnection = errors.New("unknown connection")

// DefaultDatabases is how many databases a server has unless it says
// otherwise (CONFIG GET databases).
const DefaultDatabases = 16

// ConnConfig names one Redis server.
type ConnConfig struct {
	Name string
	URL  string
}

var connName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,31}$`)

// ValidName reports whether s may name a connection: it appears in URLs and topics.
func ValidName(s string) bool { return connName.MatchString(s) }

// TargetID is a short stable identity of the server a connection URL
// names: the first 8 bytes, hex, of SHA-256 of its display URL
// (RedactURL: the password is never hashed). Replicas sharing an audit
// Redis name a connection's shared work with it beside the connection's
// name, so that two consoles whose connections share a name but not a
// server (staging and prod) share nothing.
func TargetID(rawURL string) string { return displayID(RedactURL(rawURL)) }

func displayID(display string) string {
	h := sha256.Sum256([]byte(display))
	return hex.EncodeToString(h[:8])
}

// TargetID is TargetID of c's URL.
func (c *Conn) TargetID() string { return displayID(c.Display) }

// Status is a connection's reachability as last seen by its monitor.
type Status struct {
	Up      bool
	Since   time.Time // when the current state began
	Checked time.Time // last probe; zero before the first one
	Err     string    // last error, credentials never included
}

// Conn is one named Redis server. Its clients reconnect by themselves; the
// monitor only observes and reports.
type Conn struct {
	Name    string
	Display string // URL with the password hidden
	BaseDB  int

	opts   *redis.Options
	target target
	client redis.UniversalClient // commands on BaseDB
	// multi serves pipelines that SELECT across databases. Every pipeline on
	// it begins with its own SELECT, so the session state it leaves behind
	// never reaches a command that did not choose its database.
	multi redis.UniversalClient

	mu        sync.Mutex
	kind      Kind
	detected  bool // the kind is settled (a redis:// server was asked)
	status    Status
	onChange  []func(Status)
	dbs       map[int]redis.UniversalClient
	hooks     []redis.Hook                 // AddHook's, for clients made later too
	hookList  atomic.Pointer[[]redis.Hook] // a copy of hooks for cluster nodes' clients (connHooks)
	pack      PackChoice
	detecting sync.Mutex // held while a pack detection runs
	// Detection while no pack fits: due at packNext, which backs off by
	// packWait (see packRetryMin, packRetryMax); zero at once.
	packs    []*schema.Pack // offered to detection (Registry.UsePacks)
	packNext time.Time
	packWait time.Duration
	// Detections run under the monitor's context (detectCtx, nil while no
	// monitor runs) and are awaited (detectWG) before Monitor returns;
	// none starts once it is returning (detectEnd).
	detectCtx context.Context
	detectWG  sync.WaitGroup
	detectEnd bool
	scripts   Scripts
	log       *slog.Logger
	clock     clock.Clock // probes, status times and the pack's back-off
	own       *ownTraffic // commands Keydeck has this server run
	ks        keyspaceState
	kev       keyEvents // the consumers of its keyspace events (OnKeyEvent)
}

// Open builds the clients for cfg; it does not dial (a server that is down at
// start is reported by the monitor, not a start-up failure).
func Open(cfg ConnConfig, log *slog.Logger) (*Conn, error) {
	return open(cfg, log, nil, nil)
}

// open is Open counting Keydeck's commands in own, shared with other
// connections to the same server (nil: a counter of its own).
func open(cfg ConnConfig, log *slog.Logger, own *ownTraffic, clk clock.Clock) (*Conn, error) {
	if !ValidName(cfg.Name) {
		return nil, fmt.Errorf("connection name %q: use lowercase letters, digits, - and _ (max 32)", cfg.Name)
	}
	tgt, err := parseTarget(cfg.URL)
	if err != nil {
		return nil, err
	}
	opt := tgt.opts
	opt.DialTimeout = 2 * time.Second
	opt.ReadTimeout = 2 * time.Second
	opt.WriteTimeout = 2 * time.Second
	opt.MaxRetries = 1
	// Fail fast when the server is down: the monitor and the next tick
	// retry anyway, and a page must say "disconnected" within 2 s.
	opt.DialerRetries = 1
	opt.ClientName = "keydeck"
	opt.DisableIdentity = true
	multiOpt := *opt
	multiOpt.PoolSize = 2
	multiOpt.MinIdleConns = 0
	if own == nil {
		own = &ownTraffic{}
	}
	clk = clock.Or(clk)
	own.lat.useClock(clk)
	c := &Conn{
		Name:    cfg.Name,
		Display: RedactURL(cfg.URL),
		BaseDB:  opt.DB,
		opts:    opt,
		target:  tgt,
		dbs:     map[int]redis.UniversalClient{},
		log:     log.With("conn", cfg.Name),
		status:  Status{Since: clk.Now()},
		own:     own,
		clock:   clk,
	}
	switch {
	case tgt.sentinels != nil:
		c.kind, c.detected = Sentinel, true
	case opt.Network == "unix":
		c.detected = true // a cluster is not reached over a socket
	}
	c.client = c.newClient(opt)
	c.multi = c.newClient(&multiOpt)
	return c, nil
}

// newClient is a client whose commands count as Keydeck's own traffic: a
// sentinel connection's follows the primary through failovers.
func (c *Conn) newClient(o *redis.Options) *redis.Client {
	var cl *redis.Client
	if c.target.sentinels != nil {
		cl = newFailoverClient(o, c.target)
	} else {
		cl = redis.NewClient(o)
	}
	cl.AddHook(ownHook{c.own})
	return cl
}

// Client is the client on the connection's own database (on a cluster,
// one that routes every key to its slot's node).
func (c *Conn) Client() redis.UniversalClient {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.client
}

// DB returns a client bound to database idx, created on first use. A
// cluster has database 0 only: other indexes get a client whose every
// command fails (the server refuses SELECT), and CheckDB says why.
func (c *Conn) DB(idx int) redis.UniversalClient {
	c.mu.Lock()
	defer c.mu.Unlock()
	if idx == c.BaseDB || c.kind == Cluster && idx == 0 {
		return c.client
	}
	if cl, ok := c.dbs[idx]; ok {
		return cl
	}
	o := *c.opts
	o.DB = idx
	o.PoolSize = 4
	cl := c.newClient(&o)
	for _, h := range c.hooks {
		cl.AddHook(h)
	}
	c.dbs[idx] = cl
	return cl
}

// AddHook adds h to every client of the connection, those made later
// included: a measurement (cmd/bench-pages) sees every round trip.
func (c *Conn) AddHook(h redis.Hook) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.hooks = append(c.hooks, h)
	hs := slices.Clone(c.hooks)
	c.hookList.Store(&hs)
	if c.kind != Cluster { // a cluster's node clients run the list (connHooks)
		c.client.AddHook(h)
		if c.multi != c.client {
			c.multi.AddHook(h)
		}
	}
	for _, cl := range c.dbs {
		cl.AddHook(h)
	}
}

// CrossDBPipeline is a pipeline whose commands choose their database with
// SELECT, so one round trip can read several databases. Begin it with a
// SELECT: a pipeline on it must not rely on the database an earlier one
// left selected.
func (c *Conn) CrossDBPipeline() redis.Pipeliner {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.multi.Pipeline()
}

// Log is the connection's logger (its lines carry the connection name).
func (c *Conn) Log() *slog.Logger { return c.log }

// Scripts is how the connection's server runs Keydeck's read-only scripts.
func (c *Conn) Scripts() *Scripts { return &c.scripts }

// Status returns the last observed reachability.
func (c *Conn) Status() Status {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.status
}

// OnChange registers f to run (in the monitor goroutine) on every up/down change.
func (c *Conn) OnChange(f func(Status)) {
	c.mu.Lock()
	c.onChange = append(c.onChange, f)
	c.mu.Unlock()
}

// record updates the status from one probe and reports a change.
func (c *Conn) record(err error, now time.Time) {
	c.mu.Lock()
	prev := c.status
	up := err == nil
	st := Status{Up: up, Since: prev.Since, Checked: now}
	if err != nil {
		st.Err = c.SafeErr(err)
	}
	changed := prev.Checked.IsZero() || prev.Up != up
	if changed {
		st.Since = now
	}
	if changed && up {
		// A server that (re)appears may hold other keys now: a
		// connection without a pack samples it at once.
		c.packNext, c.packWait = time.Time{}, 0
	}
	c.status = st
	hooks := append([]func(Status){}, c.onChange...)
	c.mu.Unlock()
	if !changed {
		return
	}
	if up {
		c.log.Info("redis connection up", "url", c.Display)
	} else {
		c.log.Warn("redis connection down", "url", c.Display, "err", st.Err)
	}
	for _, f := range hooks {
		f(st)
	}
}

// SafeErr renders err without any credential it might echo.
func (c *Conn) SafeErr(err error) string {
	msg := err.Error()
	if c.opts.Password != "" {
		msg = strings.ReplaceAll(msg, c.opts.Password, "xxxxx")
	}
	return msg
}

// WrapErr hides credentials in an error that may be shown. A read error
// stays one (errors.Is ErrRead), so its status does not change with the
// password.
func (c *Conn) WrapErr(err error) error {
	if err == nil || c.opts.Password == "" || !strings.Contains(err.Error(), c.opts.Password) {
		return err
	}
	if errors.Is(err, ErrRead) {
		return readError{c.SafeErr(err)}
	}
	return errors.New(c.SafeErr(err))
}

// Monitor probes the server with PING every interval until ctx ends, so a
// server that goes away is reported within about one interval. Pack
// detections it leads to (EnsurePack) run under ctx too, and Monitor
// returns only when they have ended.
func (c *Conn) Monitor(ctx context.Context, interval time.Duration) {
	c.mu.Lock()
	c.detectCtx, c.detectEnd = ctx, false
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.detectCtx, c.detectEnd = nil, true
		c.mu.Unlock()
		c.detectWG.Wait()
	}()
	t := c.clock.NewTicker(interval)
	defer t.Stop()
	for {
		pctx, cancel := context.WithTimeout(ctx, interval)
		err := c.detect(pctx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		c.record(err, c.clock.Now())
		if err == nil {
			c.retryPack()
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
	}
}

// Close closes every client.
func (c *Conn) Close() error {
	c.kev.close()       // the keyspace subscription (OnKeyEvent), before its clients
	closeNodeClients(c) // the overview's clients of single cluster nodes (nodes.go)
	c.mu.Lock()
	defer c.mu.Unlock()
	if cc, ok := c.client.(*redis.ClusterClient); ok {
		dropCluster(cc)
	}
	errs := []error{c.client.Close()}
	if c.multi != c.client {
		errs = append(errs, c.multi.Close())
	}
	for _, cl := range c.dbs {
		errs = append(errs, cl.Close())
	}
	return errors.Join(errs...)
}

// Registry holds every configured connection in configuration order.
type Registry struct {
	conns  []*Conn
	byName map[string]*Conn
	packs  []*schema.Pack
}

// RegistryOption sets up a registry.
type RegistryOption func(*registryOptions)

type registryOptions struct{ clock clock.Clock }

// WithClock runs the connections' monitors, status times and pack
// back-off on c (the wall clock without).
func WithClock(c clock.Clock) RegistryOption {
	return func(o *registryOptions) { o.clock = c }
}

// NewRegistry opens every connection; names must be unique.
func NewRegistry(cfgs []ConnConfig, log *slog.Logger, opts ...RegistryOption) (*Registry, error) {
	var o registryOptions
	for _, f := range opts {
		f(&o)
	}
	r := &Registry{byName: map[string]*Conn{}}
	// Connections to one server (to different databases, say) share the
	// count of Keydeck's own commands, which the server counts together.
	own := map[string]*ownTraffic{}
	for _, cfg := range cfgs {
		if _, dup := r.byName[cfg.Name]; dup {
			r.Close()
			return nil, fmt.Errorf("connection %q named twice", cfg.Name)
		}
		var server string
		if t, err := parseTarget(cfg.URL); err == nil {
			server = t.opts.Network + " " + t.opts.Addr
			if t.sentinels != nil { // the primary the sentinels name, not the first sentinel
				server = "sentinel " + strings.Join(slices.Sorted(slices.Values(t.sentinels)), ",") + "/" + t.master
			}
		}
		if own[server] == nil {
			own[server] = &ownTraffic{}
		}
		c, err := open(cfg, log, own[server], o.clock)
		if err != nil {
			r.Close()
			return nil, fmt.Errorf("connection %q: %w", cfg.Name, err)
		}
		r.conns = append(r.conns, c)
		r.byName[c.Name] = c
	}
	return r, nil
}

// All returns the connections in configuration order.
func (r *Registry) All() []*Conn { return r.conns }

// Get finds a connection by name.
func (r *Registry) Get(name string) (*Conn, error) {
	if c, ok := r.byName[name]; ok {
		return c, nil
	}
	return nil, fmt.Errorf("%w %q", ErrUnknownConnection, name)
}

// Monitor runs every connection's monitor until ctx ends.
func (r *Registry) Monitor(ctx context.Context, interval time.Duration) {
	var wg sync.WaitGroup
	for _, c := range r.conns {
		wg.Add(1)
		go func() { defer wg.Done(); c.Monitor(ctx, interval) }()
	}
	wg.Wait()
}

// Close closes every connection.
func (r *Registry) Close() error {
	var errs []error
	for _, c := range r.conns {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}
