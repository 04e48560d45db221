package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/keydeck/keydeck/handlers"
	"github.com/keydeck/keydeck/internal/demo"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/bulk"
	"github.com/keydeck/keydeck/redisview/stats"
)

// Config is everything the process needs, parsed from flags and environment.
type Config struct {
	Addr         string
	Conns        []redisview.ConnConfig // empty: run the embedded demo
	PollInterval time.Duration
	LogFormat    string // text or json
	LogLevel     string
	PackFiles    []string          // extra schema packs, loaded at start
	PackFor      map[string]string // connection → pack name, overriding detection
	Sweep        stats.SweepBudget
	// SearchRate is each connection's scan budget (keys/s) for the scans
	// people start: searches and the user page's (--search-rate).
	SearchRate int
	// Bulk are the bulk jobs' figures (bulkflags.go).
	Bulk bulk.Options

	UsersFile      string
	SessionSecret  string
	SessionTTL     time.Duration
	ReadOnly       bool
	TrustedProxies []netip.Prefix
	ProxyUser      string
	ProxyEmail     string
	ProxyRole      string
	ProxyMatch     string // name or email: the one field that finds a proxy user's account
	AllowedHosts   []string
	ReadyzDetail   bool
	Audit          string // NAME/DB; "" = database 15 of the first connection
	AuditMaxLen    int64
	// VertiqueSecretEnv and VertiqueSecretFile name where vertique's
	// rateLimit.keyDerivation.secret is (at most one); the secret itself
	// is read by vertiqueSecret, never kept in Config.
	VertiqueSecretEnv  string
	VertiqueSecretFile string
	// MetricsAddr, when set, is a listener of its own serving only
	// /metrics, without sign-in; MetricsKeep makes /metrics's keeper hold
	// the sweeps it reports on (server.Config.MetricsKeep; the embedded
	// demo always does).
	MetricsAddr string
	MetricsKeep bool
	// ConsoleAllowDangerous: the console runs @dangerous commands for
	// admins, previewed with their scope and a typed confirmation.
	ConsoleAllowDangerous bool

	// demoStarted, when set (by tests), is told the embedded demo's servers
	// once they run, before the console starts.
	demoStarted func([]demo.Conn)
}

// Demo reports whether no Redis was named, so the embedded demo runs.
func (c Config) Demo() bool { return len(c.Conns) == 0 }

// redisFlags collects repeated --redis NAME=URL values.
type redisFlags []redisview.ConnConfig

func (r *redisFlags) String() string { return "" }

func (r *redisFlags) Set(v string) error {
	c, err := parseConnSpec(v)
	if err != nil {
		return err
	}
	*r = append(*r, c)
	return nil
}

// parseConnSpec parses NAME=URL. Errors never echo the URL's password.
func parseConnSpec(v string) (redisview.ConnConfig, error) {
	name, url, ok := strings.Cut(strings.TrimSpace(v), "=")
	if !ok || name == "" || url == "" {
		return redisview.ConnConfig{}, errors.New("want NAME=URL, e.g. eisland=redis://127.0.0.1:6379")
	}
	if !redisview.ValidName(name) {
		return redisview.ConnConfig{}, fmt.Errorf("name %q: use lowercase letters, digits, - and _ (at most 32)", name)
	}
	if _, err := redisview.ParseURL(url); err != nil {
		return redisview.ConnConfig{}, fmt.Errorf("%s: %w", name, err)
	}
	return redisview.ConnConfig{Name: name, URL: url}, nil
}

// listFlag collects a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// packForFlag collects repeated --pack-for NAME=PACK values.
type packForFlag map[string]string

func (p packForFlag) String() string { return "" }

func (p packForFlag) Set(v string) error {
	name, pack, ok := strings.Cut(v, "=")
	if !ok || !redisview.ValidName(name) || strings.TrimSpace(pack) == "" {
		return errors.New("want NAME=PACK, e.g. eisland=eisland")
	}
	if _, dup := p[name]; dup {
		return fmt.Errorf("connection %q given twice", name)
	}
	p[name] = pack
	return nil
}

// parseFlags parses args (without the program name) and the environment,
// looked up through getenv so tests stay pure. Flags win over environment.
func parseFlags(prog string, args []string, getenv func(string) string) (Config, error) {
	cfg := Config{}
	fs, fl := defineFlags(prog, &cfg)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return cfg, err
		}
		return cfg, cleanFlagErr(err)
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	conns, err := connections(fl.conns, getenv)
	if err != nil {
		return cfg, err
	}
	cfg.Conns = conns
	seen := map[string]bool{}
	for _, c := range conns {
		seen[c.Name] = true
	}
	for _, check := range []func() error{
		func() error { return cfg.checkSignIn(fl.proxies, getenv) },
		func() error { return cfg.checkAudit(seen) },
		func() error { return cfg.checkHostsAndPacks(fl, seen) },
		func() error { return cfg.checkBudgets(fl.sweepCPU) },
		cfg.checkServing,
		cfg.checkBulk,
	} {
		if err := check(); err != nil {
			return cfg, err
		}
	}
	return cfg, nil
}

// flagLists are the repeatable flags, collected before they are checked.
type flagLists struct {
	conns          redisFlags
	packs          listFlag
	packFor        packForFlag
	proxies, hosts listFlag
	sweepCPU       float64 // --sweep-cpu, per cent
}

// defineFlags declares every flag, writing into cfg and the lists.
func defineFlags(prog string, cfg *Config) (*flag.FlagSet, *flagLists) {
	fs := flag.NewFlagSet(prog, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fl := &flagLists{packFor: packForFlag{}}
	fs.StringVar(&cfg.Addr, "addr", "127.0.0.1:8080", "HTTP listen address")
	fs.Var(&fl.conns, "redis", "Redis connection NAME=URL (repeatable; redis://, rediss://, unix://; a cluster node's redis://h:p[?addr=h2:p2…]; redis+sentinel://[user:pw@]h:p[,h2:p2…]/MASTER[/DB][?sentinel_password=])")
	fs.DurationVar(&cfg.PollInterval, "poll-interval", time.Second, "how often live views read Redis (100ms–1m)")
	fs.StringVar(&cfg.LogFormat, "log-format", "text", "log format: text or json")
	fs.StringVar(&cfg.LogLevel, "log-level", "info", "log level: debug, info, warn or error")
	fs.Var(&fl.packs, "pack", "load a schema pack from FILE (repeatable)")
	fs.Var(fl.packFor, "pack-for", "use pack PACK for connection NAME: NAME=PACK (repeatable)")
	fs.IntVar(&cfg.Sweep.KeysPerSec, "sweep-rate", stats.DefaultSweepBudget.KeysPerSec, "at most this many keys per second a database sweep reads (10–1000000)")
	fs.Float64Var(&fl.sweepCPU, "sweep-cpu", stats.DefaultSweepBudget.CPU*100, "per cent of one Redis core a database sweep may cost while it runs, by its cost model (0.01–100)")
	fs.IntVar(&cfg.Sweep.Sample, "sweep-sample", stats.DefaultSweepBudget.Sample, "keys of each family a sweep pass reads whole for memory and type (10–1000000); the rest are counted from their names")
	fs.IntVar(&cfg.Sweep.Count, "sweep-count", stats.DefaultSweepBudget.Count, "SCAN COUNT of a sweep step (10–10000)")
	fs.IntVar(&cfg.SearchRate, "search-rate", stats.DefaultSearchRate, "keys per second every search and user-page scan of one connection may read together, shared fairly between users (10–1000000)")
	defineBulkFlags(fs, &cfg.Bulk)
	fs.StringVar(&cfg.UsersFile, "users", "", "users file (YAML) enabling sign-in")
	fs.StringVar(&cfg.SessionSecret, "session-secret", "", "secret signing sessions and CSRF tokens (≥ 32 bytes; share it between replicas)")
	fs.DurationVar(&cfg.SessionTTL, "session-ttl", 12*time.Hour, "how long a sign-in lasts (5m–720h)")
	fs.BoolVar(&cfg.ReadOnly, "read-only", false, "disable every action for every role")
	fs.Var(&fl.proxies, "trusted-proxy", "trust identity headers from this CIDR (repeatable)")
	fs.StringVar(&cfg.ProxyUser, "proxy-user-header", "X-Forwarded-User", "header naming the user behind a trusted proxy")
	fs.StringVar(&cfg.ProxyEmail, "proxy-email-header", "X-Forwarded-Email", "header with the user's e-mail behind a trusted proxy")
	fs.StringVar(&cfg.ProxyRole, "proxy-role-header", "", "header with the user's role behind a trusted proxy (default: the users file, else viewer)")
	fs.StringVar(&cfg.ProxyMatch, "proxy-match", "name", "which proxy header finds the account in the users file: name or email")
	fs.Var(&fl.hosts, "allowed-host", "without sign-in, also answer to this Host name besides loopback names (repeatable)")
	fs.BoolVar(&cfg.ReadyzDetail, "readyz-detail", false, "tell anonymous /readyz callers which connections are down (signed-in users always see it)")
	fs.StringVar(&cfg.Audit, "audit", "", "where the audit log lives: NAME/DB (default: database 15 of the first connection)")
	fs.Int64Var(&cfg.AuditMaxLen, "audit-maxlen", 100000, "approximate cap of the audit stream's length")
	fs.StringVar(&cfg.VertiqueSecretEnv, "vertique-secret-env", "", "name of the environment variable holding vertique's key-derivation secret (never shown or logged)")
	fs.StringVar(&cfg.VertiqueSecretFile, "vertique-secret-file", "", "file holding vertique's key-derivation secret (never shown or logged; one trailing newline is dropped)")
	fs.StringVar(&cfg.MetricsAddr, "metrics-addr", "", "also serve /metrics, alone and without sign-in, on this HOST:PORT (for a Prometheus on a private network)")
	fs.BoolVar(&cfg.MetricsKeep, "metrics-keep", false, "keep the sweeps /metrics reports on running while nobody has a page open (default: only in the embedded demo; off, /metrics reports what pages started)")
	fs.BoolVar(&cfg.ConsoleAllowDangerous, "console-allow-dangerous", false, "let admins run the command console's @dangerous commands (FLUSHDB, FLUSHALL, CONFIG RESETSTAT, DEBUG SLEEP …), each previewed with its scope and confirmed by typing the connection's name (default: refused for everyone)")
	return fs, fl
}

// connections are the --redis connections, else KEYDECK_REDIS's, each
// name at most once.
func connections(conns redisFlags, getenv func(string) string) ([]redisview.ConnConfig, error) {
	if len(conns) == 0 {
		if env := strings.TrimSpace(getenv("KEYDECK_REDIS")); env != "" {
			for _, spec := range strings.Split(env, ",") {
				if strings.TrimSpace(spec) == "" {
					continue
				}
				c, err := parseConnSpec(spec)
				if err != nil {
					return nil, fmt.Errorf("invalid KEYDECK_REDIS entry: %w", err)
				}
				conns = append(conns, c)
			}
		}
	}
	seen := map[string]bool{}
	for _, c := range conns {
		if seen[c.Name] {
			return nil, fmt.Errorf("invalid value for flag --redis: connection %q named twice", c.Name)
		}
		seen[c.Name] = true
	}
	return conns, nil
}

// checkSignIn checks the session secret (else KEYDECK_SESSION_SECRET's),
// the session's lifetime and the trusted proxies.
func (cfg *Config) checkSignIn(proxies listFlag, getenv func(string) string) error {
	if cfg.SessionSecret == "" {
		cfg.SessionSecret = getenv("KEYDECK_SESSION_SECRET")
	}
	if cfg.SessionSecret != "" && len(cfg.SessionSecret) < 32 {
		return errors.New("invalid value for flag --session-secret: want at least 32 bytes")
	}
	if cfg.SessionTTL < 5*time.Minute || cfg.SessionTTL > 720*time.Hour {
		return fmt.Errorf("invalid value %s for flag --session-ttl: want 5m to 720h", cfg.SessionTTL)
	}
	for _, p := range proxies {
		pfx, err := netip.ParsePrefix(strings.TrimSpace(p))
		if err != nil {
			addr, aerr := netip.ParseAddr(strings.TrimSpace(p))
			if aerr != nil {
				return fmt.Errorf("invalid value %q for flag --trusted-proxy: want a CIDR such as 10.0.0.0/8 or an address", p)
			}
			pfx = netip.PrefixFrom(addr, addr.BitLen())
		}
		cfg.TrustedProxies = append(cfg.TrustedProxies, pfx.Masked())
	}
	switch cfg.ProxyMatch {
	case "name", "email":
	default:
		return fmt.Errorf("invalid value %q for flag --proxy-match: want name or email", cfg.ProxyMatch)
	}
	return nil
}

// checkAudit checks where the audit log lives (a connection named, seen)
// and its length, and that vertique's secret has one source at most.
func (cfg *Config) checkAudit(seen map[string]bool) error {
	if cfg.Audit != "" {
		name, db, ok := strings.Cut(cfg.Audit, "/")
		_, err := route.ParseDB(db)
		if !ok || !redisview.ValidName(name) || err != nil {
			return fmt.Errorf("invalid value %q for flag --audit: want NAME/DB, e.g. eisland/15", cfg.Audit)
		}
		if len(seen) > 0 && !seen[name] {
			return fmt.Errorf("invalid value for flag --audit: no connection named %q", name)
		}
	}
	if cfg.VertiqueSecretEnv != "" && cfg.VertiqueSecretFile != "" {
		return errors.New("invalid value for flag --vertique-secret-env: give it or --vertique-secret-file, not both")
	}
	if cfg.AuditMaxLen < 100 {
		return fmt.Errorf("invalid value %d for flag --audit-maxlen: want at least 100", cfg.AuditMaxLen)
	}
	return nil
}

// checkHostsAndPacks takes the allowed hosts and the packs, each
// --pack-for naming a connection (seen).
func (cfg *Config) checkHostsAndPacks(fl *flagLists, seen map[string]bool) error {
	for _, h := range fl.hosts {
		h = strings.TrimSpace(h)
		if h == "" || strings.ContainsAny(h, ":/ ") {
			return fmt.Errorf("invalid value %q for flag --allowed-host: want a host name without port", h)
		}
		cfg.AllowedHosts = append(cfg.AllowedHosts, h)
	}
	cfg.PackFiles = fl.packs
	cfg.PackFor = fl.packFor
	for name := range fl.packFor {
		if !seen[name] && len(seen) > 0 {
			return fmt.Errorf("invalid value for flag --pack-for: no connection named %q", name)
		}
	}
	return nil
}

// checkBudgets checks the sweep's and the searches' budgets.
func (cfg *Config) checkBudgets(sweepCPU float64) error {
	if cfg.Sweep.KeysPerSec < 10 || cfg.Sweep.KeysPerSec > 1_000_000 {
		return fmt.Errorf("invalid value %d for flag --sweep-rate: want 10 to 1000000", cfg.Sweep.KeysPerSec)
	}
	if !(sweepCPU >= 0.01 && sweepCPU <= 100) {
		return fmt.Errorf("invalid value %v for flag --sweep-cpu: want 0.01 to 100 (per cent of one Redis core)", sweepCPU)
	}
	cfg.Sweep.CPU = sweepCPU / 100
	if cfg.Sweep.Sample < 10 || cfg.Sweep.Sample > 1_000_000 {
		return fmt.Errorf("invalid value %d for flag --sweep-sample: want 10 to 1000000 keys per family", cfg.Sweep.Sample)
	}
	if cfg.SearchRate < 10 || cfg.SearchRate > 1_000_000 {
		return fmt.Errorf("invalid value %d for flag --search-rate: want 10 to 1000000 keys per second", cfg.SearchRate)
	}
	if cfg.Sweep.Count < 10 || cfg.Sweep.Count > 10_000 {
		return fmt.Errorf("invalid value %d for flag --sweep-count: want 10 to 10000", cfg.Sweep.Count)
	}
	return nil
}

// checkServing checks the listen address, the live views' interval and
// the logging.
func (cfg *Config) checkServing() error {
	if _, port, err := net.SplitHostPort(cfg.Addr); err != nil {
		return fmt.Errorf("invalid value %q for flag --addr: want HOST:PORT", cfg.Addr)
	} else if n, err := strconv.Atoi(port); err != nil {
		return fmt.Errorf("invalid value %q for flag --addr: port %q is not a number", cfg.Addr, port)
	} else if n < 0 || n > 65535 {
		return fmt.Errorf("invalid value %q for flag --addr: port %d out of range (want 0–65535)", cfg.Addr, n)
	}
	if cfg.MetricsAddr != "" {
		if _, port, err := net.SplitHostPort(cfg.MetricsAddr); err != nil {
			return fmt.Errorf("invalid value %q for flag --metrics-addr: want HOST:PORT", cfg.MetricsAddr)
		} else if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
			return fmt.Errorf("invalid value %q for flag --metrics-addr: port %q out of range (want 0–65535)", cfg.MetricsAddr, port)
		}
	}
	if cfg.PollInterval < 100*time.Millisecond || cfg.PollInterval > time.Minute {
		return fmt.Errorf("invalid value %s for flag --poll-interval: want 100ms to 1m", cfg.PollInterval)
	}
	switch cfg.LogFormat {
	case "text", "json":
	default:
		return fmt.Errorf("invalid value %q for flag --log-format: want text or json", cfg.LogFormat)
	}
	switch cfg.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		return fmt.Errorf("invalid value %q for flag --log-level: want debug, info, warn or error", cfg.LogLevel)
	}
	return nil
}

// cleanFlagErr keeps the flag package's message (which names the flag) but
// names flags as the docs and --help write them (--addr, not -addr), and
// drops the value it quotes for --redis, since that value may hold a
// password.
func cleanFlagErr(err error) error {
	msg := err.Error()
	for _, p := range []string{"flag provided but not defined: -", "flag needs an argument: -"} {
		if rest, ok := strings.CutPrefix(msg, p); ok && !strings.HasPrefix(rest, "-") {
			return errors.New(p + "-" + rest)
		}
	}
	if !strings.HasPrefix(msg, "invalid value ") {
		return err
	}
	if i := strings.Index(msg, `" for flag -`); i >= 0 {
		msg = msg[:i] + `" for flag --` + msg[i+len(`" for flag -`):]
	}
	if _, rest, ok := strings.Cut(msg, " for flag --redis: "); ok {
		return fmt.Errorf("invalid value for flag --redis: %s", rest)
	}
	return errors.New(msg)
}

// vertiqueSecret reads vertique's key-derivation secret from where the
// flags name it. Errors name the variable or the file, never the secret. In
// the embedded demo with neither flag, the demo's own secret is used (and
// the page says so).
func vertiqueSecret(cfg Config, getenv func(string) string, readFile func(string) ([]byte, error)) (handlers.VertiqueSecret, error) {
	switch {
	case cfg.VertiqueSecretEnv != "":
		v := getenv(cfg.VertiqueSecretEnv)
		if v == "" {
			return handlers.VertiqueSecret{}, fmt.Errorf("invalid value for flag --vertique-secret-env: environment variable %s is unset or empty", cfg.VertiqueSecretEnv)
		}
		return handlers.VertiqueSecret{Secret: []byte(v), From: "environment variable " + cfg.VertiqueSecretEnv}, nil
	case cfg.VertiqueSecretFile != "":
		b, err := readFile(cfg.VertiqueSecretFile)
		if err != nil {
			return handlers.VertiqueSecret{}, fmt.Errorf("invalid value for flag --vertique-secret-file: cannot read %s", cfg.VertiqueSecretFile)
		}
		b = bytes.TrimSuffix(bytes.TrimSuffix(b, []byte("\n")), []byte("\r"))
		if len(b) == 0 {
			return handlers.VertiqueSecret{}, fmt.Errorf("invalid value for flag --vertique-secret-file: %s is empty", cfg.VertiqueSecretFile)
		}
		return handlers.VertiqueSecret{Secret: b, From: "file " + cfg.VertiqueSecretFile}, nil
	case cfg.Demo():
		return handlers.VertiqueSecret{Secret: []byte(demo.DemoSecret), From: "the embedded demo", Demo: true}, nil
	}
	return handlers.VertiqueSecret{}, nil
}
