package redisview

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Kind is how a connection reaches its data.
type Kind int

const (
	// Standalone: one server (or one whose kind is not known yet).
	Standalone Kind = iota
	// Cluster: a Redis Cluster; keys live on the primary of their slot.
	Cluster
	// Sentinel: a primary that sentinels name, followed through failovers.
	Sentinel
)

func (k Kind) String() string {
	switch k {
	case Cluster:
		return "cluster"
	case Sentinel:
		return "sentinel"
	}
	return "standalone"
}

// Topology is what pages may know of a connection's deployment.
type Topology struct {
	Kind Kind
	// Databases is how many databases may be chosen: 1 on a cluster (it
	// has database 0 only); 0 where the server decides (CONFIG GET
	// databases, see CheckDB).
	Databases int
	// Master is a sentinel connection's master name.
	Master string
}

// target is a parsed connection URL.
type target struct {
	opts *redis.Options // credentials, database, TLS of the data nodes
	// seeds are a cluster's addresses to discover it from: the URL's host
	// and its ?addr= parameters (go-redis's cluster URL form).
	seeds []string
	// sentinel: the sentinels' addresses and the master's name.
	sentinels   []string
	master      string
	sentinelPwd string
	// serverName is ?tls_server_name=: the name every host's certificate
	// is verified against ("": each host dialled by its own name).
	serverName string
}

// parseTarget reads redis://, rediss:// (with ?addr= seeds), unix:// and
// redis+sentinel:// / rediss+sentinel:// URLs. Errors never contain the
// password.
func parseTarget(raw string) (target, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return target{}, fmt.Errorf("%w: not a URL", ErrBadURL)
	}
	var name string
	if q := u.Query(); q.Has("tls_server_name") {
		name = q.Get("tls_server_name")
		q.Del("tls_server_name")
		u.RawQuery = q.Encode()
	}
	t, err := parseTargetURL(raw, u)
	if err != nil || name == "" {
		return t, err
	}
	if t.opts.TLSConfig == nil {
		return target{}, fmt.Errorf("%w %q: tls_server_name needs TLS (rediss:// or rediss+sentinel://)", ErrBadURL, RedactURL(raw))
	}
	t.serverName = name
	t.opts.TLSConfig.ServerName = name
	return t, nil
}

func parseTargetURL(raw string, u *url.URL) (target, error) {
	if base, ok := strings.CutSuffix(u.Scheme, "+sentinel"); ok && (base == "redis" || base == "rediss") {
		return parseSentinel(raw, u, base)
	}
	var seeds []string
	if q := u.Query(); q.Has("addr") && (u.Scheme == "redis" || u.Scheme == "rediss") {
		for _, a := range q["addr"] {
			if _, p, err := net.SplitHostPort(a); err != nil || !validPort(p) {
				return target{}, fmt.Errorf("%w %q: addr %q is not host:port", ErrBadURL, RedactURL(raw), a)
			}
			seeds = append(seeds, a)
		}
		q.Del("addr")
		u.RawQuery = q.Encode()
	}
	opt, err := parseServerURL(raw, u)
	if err != nil {
		return target{}, err
	}
	if u.Scheme != "unix" {
		seeds = append([]string{opt.Addr}, seeds...)
	}
	return target{opts: opt, seeds: seeds}, nil
}

// parseSentinel reads [user:password@]h1:p1[,h2:p2…]/MASTER[/DB] with an
// optional ?sentinel_password=; the other parameters are a redis:// URL's.
func parseSentinel(raw string, u *url.URL, base string) (target, error) {
	t := target{}
	for _, a := range strings.Split(u.Host, ",") {
		if _, p, err := net.SplitHostPort(a); err != nil || !validPort(p) {
			return target{}, fmt.Errorf("%w %q: sentinel %q is not host:port", ErrBadURL, RedactURL(raw), a)
		}
		t.sentinels = append(t.sentinels, a)
	}
	path := strings.Trim(u.Path, "/")
	master, db, _ := strings.Cut(path, "/")
	if master == "" {
		return target{}, fmt.Errorf("%w %q: missing master name (want %s+sentinel://host:port/MASTER_NAME[/DB])", ErrBadURL, RedactURL(raw), base)
	}
	t.master = master
	q := u.Query()
	t.sentinelPwd = q.Get("sentinel_password")
	q.Del("sentinel_password")
	node := url.URL{Scheme: base, User: u.User, Host: t.sentinels[0], RawQuery: q.Encode()}
	if db != "" {
		node.Path = "/" + db
	}
	opt, err := parseServerURL(raw, &node)
	if err != nil {
		return target{}, err
	}
	t.opts = opt
	return t, nil
}

func validPort(p string) bool {
	n, err := strconv.Atoi(p)
	return err == nil && n >= 1 && n <= 65535
}

// newClusterClient is a cluster client with the options of one node.
func newClusterClient(o *redis.Options, t target) *redis.ClusterClient {
	return redis.NewClusterClient(clusterOptions(o, t))
}

// clusterOptions are a cluster client's options: one node's, from the
// URL's seeds.
func clusterOptions(o *redis.Options, t target) *redis.ClusterOptions {
	return &redis.ClusterOptions{
		Addrs:           t.seeds,
		ClientName:      o.ClientName,
		Username:        o.Username,
		Password:        o.Password,
		TLSConfig:       o.TLSConfig,
		Protocol:        o.Protocol,
		MaxRetries:      o.MaxRetries,
		DialTimeout:     o.DialTimeout,
		DialerRetries:   o.DialerRetries,
		ReadTimeout:     o.ReadTimeout,
		WriteTimeout:    o.WriteTimeout,
		PoolSize:        o.PoolSize,
		MinIdleConns:    o.MinIdleConns,
		DisableIdentity: o.DisableIdentity,
		Dialer:          hostTLSDialer(o, t),
	}
}

// hostTLSDialer dials TLS verifying each host under its own name (a
// cluster's nodes, a sentinel's primary and sentinels are other hosts
// than the one the URL names first), or under ?tls_server_name= when
// given; nil without TLS (go-redis's own dialer).
func hostTLSDialer(o *redis.Options, t target) func(context.Context, string, string) (net.Conn, error) {
	if o.TLSConfig == nil {
		return nil
	}
	base, timeout := o.TLSConfig, o.DialTimeout
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		cfg := base.Clone()
		if t.serverName == "" {
			host, _, err := net.SplitHostPort(addr)
			if err != nil {
				host = addr
			}
			cfg.ServerName = host
		}
		d := tls.Dialer{NetDialer: &net.Dialer{Timeout: timeout, KeepAlive: 5 * time.Minute}, Config: cfg}
		return d.DialContext(ctx, network, addr)
	}
}

// newFailoverClient follows the primary the sentinels name.
func newFailoverClient(o *redis.Options, t target) *redis.Client {
	return redis.NewFailoverClient(failoverOptions(o, t))
}

// failoverOptions are the options of a client of the primary the
// sentinels name.
func failoverOptions(o *redis.Options, t target) *redis.FailoverOptions {
	return &redis.FailoverOptions{
		MasterName:       t.master,
		SentinelAddrs:    t.sentinels,
		SentinelPassword: t.sentinelPwd,
		ClientName:       o.ClientName,
		Username:         o.Username,
		Password:         o.Password,
		DB:               o.DB,
		TLSConfig:        o.TLSConfig,
		Protocol:         o.Protocol,
		MaxRetries:       o.MaxRetries,
		DialTimeout:      o.DialTimeout,
		DialerRetries:    o.DialerRetries,
		ReadTimeout:      o.ReadTimeout,
		WriteTimeout:     o.WriteTimeout,
		PoolSize:         o.PoolSize,
		MinIdleConns:     o.MinIdleConns,
		DisableIdentity:  o.DisableIdentity,
		Dialer:           hostTLSDialer(o, t),
	}
}

// Topology tells pages how the connection reaches its data.
func (c *Conn) Topology() Topology {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := Topology{Kind: c.kind, Master: c.target.master}
	if c.kind == Cluster {
		t.Databases = 1
	}
	return t
}

// IsCluster reports a connection to a Redis Cluster.
func (c *Conn) IsCluster() bool { return c.Topology().Kind == Cluster }

// detect asks a redis:// server whether it is a cluster node (INFO
// cluster), and if so moves the connection onto a cluster client that
// discovers every node. It is the monitor's probe until it has answered.
func (c *Conn) detect(ctx context.Context) error {
	c.mu.Lock()
	cl, done := c.client, c.detected
	c.mu.Unlock()
	if done {
		return cl.Ping(ctx).Err()
	}
	txt, err := cl.Info(ctx, "cluster").Result()
	if err != nil && !infoRefused(err) {
		txt, err = c.infoFromSeeds(ctx, err)
	}
	if err != nil && strings.Contains(err.Error(), "SELECT is not allowed in cluster mode") ||
		err == nil && strings.Contains(txt, "cluster_enabled:1") && c.BaseDB != 0 {
		// Refused, and not settled: no client reads database 0 as the
		// database the URL names.
		return fmt.Errorf("%w: %s is a Redis Cluster node, and a cluster has database 0 only; the URL names database %d (use /0 or no path)", ErrBadURL, c.Display, c.BaseDB)
	}
	if err != nil && !infoRefused(err) {
		return err
	}
	c.mu.Lock()
	if c.detected {
		c.mu.Unlock()
		return nil
	}
	c.detected = true
	if err != nil || !strings.Contains(txt, "cluster_enabled:1") {
		// A user refused INFO (ACL -info, or INFO renamed away) may still
		// PING: the connection is standalone, and up when PING answers.
		c.mu.Unlock()
		if err != nil {
			return cl.Ping(ctx).Err()
		}
		return nil
	}
	defer c.mu.Unlock()
	cc := newClusterClient(c.opts, c.target)
	// Walks' slot map and node identities, on the connection's clock,
	// kept while the connection lives (dropped at Close).
	registerCluster(cc, c.clock)
	// Hooks go on each node's client, not the cluster client's: a walk
	// sends its SCANs to the node clients directly (ScanStep), and every
	// command through the cluster client reaches a node client too, so
	// each is counted once. AddHook's hooks, later ones included, run
	// from the connection's list.
	cc.OnNewNode(func(n *redis.Client) {
		n.AddHook(ownHook{c.own})
		n.AddHook(connHooks{c})
		n.AddHook(reloadOnUnreachable{cc})
	})
	old := []redis.UniversalClient{c.client, c.multi}
	for _, d := range c.dbs {
		old = append(old, d)
	}
	c.client, c.multi, c.kind = cc, cc, Cluster
	c.dbs = map[int]redis.UniversalClient{}
	c.log.Info("redis cluster detected", "url", c.Display)
	// Commands in flight on the standalone clients end with their own
	// error; nothing new reaches them.
	for _, o := range old {
		_ = o.Close()
	}
	return nil
}

// infoRefused tells a server's refusal of INFO (NOPERM, or an unknown
// command) from an error reaching it.
func infoRefused(err error) bool {
	var re redis.Error
	if !errors.As(err, &re) {
		return false
	}
	msg := re.Error()
	return strings.HasPrefix(msg, "NOPERM") || strings.Contains(strings.ToLower(msg), "unknown command")
}

// Detect settles the connection's kind now (the monitor does it on its
// first probe that reaches the server).
func (c *Conn) Detect(ctx context.Context) error { return c.detect(ctx) }

// connHooks runs the connection's AddHook hooks (a snapshot at each call,
// so a hook added after a node's client was made reaches it too) on one
// cluster node's client, in the order they were added.
type connHooks struct{ c *Conn }

func (h connHooks) list() []redis.Hook {
	if p := h.c.hookList.Load(); p != nil {
		return *p
	}
	return nil
}

func (h connHooks) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		f := next
		hs := h.list()
		for i := len(hs) - 1; i >= 0; i-- {
			f = hs[i].DialHook(f)
		}
		return f(ctx, network, addr)
	}
}

func (h connHooks) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		f := next
		hs := h.list()
		for i := len(hs) - 1; i >= 0; i-- {
			f = hs[i].ProcessHook(f)
		}
		return f(ctx, cmd)
	}
}

func (h connHooks) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		f := next
		hs := h.list()
		for i := len(hs) - 1; i >= 0; i-- {
			f = hs[i].ProcessPipelineHook(f)
		}
		return f(ctx, cmds)
	}
}

// reloadOnUnreachable asks the cluster client to read the slot map again
// when a node cannot be reached (a primary killed: go-redis retries the
// same node and reads the map again only every 60 s, so every read of its
// slots failed for up to a minute after the cluster had failed over).
type reloadOnUnreachable struct{ cc *redis.ClusterClient }

func (h reloadOnUnreachable) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h reloadOnUnreachable) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		h.check(ctx, err)
		return err
	}
}

func (h reloadOnUnreachable) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		h.check(ctx, err)
		return err
	}
}

// check: an error that is not the server's reply (a refused or broken
// connection, a timeout) makes the client read the map again (in the
// background, at most every 200 ms however many fail).
func (h reloadOnUnreachable) check(ctx context.Context, err error) {
	var re redis.Error
	if err == nil || errors.As(err, &re) || ctx.Err() != nil {
		return
	}
	h.cc.ReloadState(ctx)
}
