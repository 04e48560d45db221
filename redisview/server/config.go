package server

import (
	"context"
	"errors"
	"github.com/keydeck/keydeck/redisview"
	"slices"
	"strings"
)

// ErrSensitive: a sensitive setting was asked for by name; it is never
// read (SensitiveConfig).
var ErrSensitive = errors.New("a sensitive setting, never read by Keydeck")

// ConfigValue reads one parameter (CONFIG GET name, no pattern); ok is
// false when the server has no such parameter. A sensitive parameter is
// not even asked for (ErrSensitive).
func ConfigValue(ctx context.Context, srv redisview.Server, name string) (value string, ok bool, err error) {
	c := srv.Client()
	if SensitiveConfig(name) {
		return "", false, ErrSensitive
	}
	if strings.ContainsAny(name, "*?[") {
		return "", false, errors.New("server: a parameter name, not a pattern, is needed")
	}
	m, err := c.ConfigGet(ctx, name).Result()
	if err != nil {
		return "", false, refusal("CONFIG GET", err)
	}
	for k, v := range m {
		if strings.EqualFold(k, name) {
			return v, true, nil
		}
	}
	return "", false, nil
}

// Config is CONFIG GET *, in groups, sensitive settings withheld.
type Config struct {
	Groups []ConfigGroup
}

// ConfigGroup is the settings of one concern, by name.
type ConfigGroup struct {
	Name   string // "Network", "Memory", …
	Params []Param
}

// Param is one setting.
type Param struct {
	Name  string
	Value string // "" when Withheld
	// Withheld: a sensitive setting (SensitiveConfig); its value was
	// dropped as soon as it was read and is never shown.
	Withheld bool
}

// configGroups say which group a parameter belongs to: the first group
// one of whose names or prefixes (ending in "-" or "*") it matches, in
// this order; "Other" for the rest.
var configGroups = []struct {
	name  string
	match []string
}{
	{"Security", []string{"requirepass", "masterauth", "masteruser", "aclfile", "acllog-*", "acl-*", "protected-mode", "enable-protected-configs", "enable-debug-command", "enable-module-command"}},
	{"Network", []string{"bind", "bind-*", "port", "tcp-*", "timeout", "unixsocket*", "tls-*", "io-threads*", "socket-*"}},
	{"Memory", []string{"maxmemory*", "lazyfree-*", "active-defrag*", "activedefrag", "activerehashing", "*-max-listpack-*", "*-max-ziplist-*", "*-max-intset-*", "list-compress-depth", "stream-node-*", "hll-*", "lfu-*", "jemalloc-*", "oom-*", "disable-thp"}},
	{"Persistence", []string{"save", "dbfilename", "dir", "rdb*", "stop-writes-on-bgsave-error", "append*", "aof-*", "auto-aof-*", "no-appendfsync-on-rewrite"}},
	{"Replication", []string{"replica*", "slave*", "repl-*", "min-replicas-*", "min-slaves-*", "masterhost", "masterport"}},
	{"Cluster", []string{"cluster-*"}},
	{"Slowlog & latency", []string{"slowlog-*", "latency-*"}},
	{"Clients", []string{"maxclients", "client-*", "tracking-*", "busy-reply-threshold", "lua-time-limit", "notify-keyspace-events"}},
	{"Server", []string{"daemonize", "pidfile", "loglevel", "logfile", "syslog-*", "databases", "always-show-logo", "set-proc-title", "proc-title-template", "supervised", "hz", "dynamic-hz", "crash-*", "locale-collate", "enable-*", "shutdown-*", "lua-*", "busy-*"}},
}

func configGroupOf(name string) string {
	for _, g := range configGroups {
		for _, m := range g.match {
			if globMatch(m, name) {
				return g.name
			}
		}
	}
	return "Other"
}

// globMatch matches name against a pattern with at most a leading and a
// trailing "*".
func globMatch(pattern, name string) bool {
	lead, trail := strings.HasPrefix(pattern, "*"), strings.HasSuffix(pattern, "*")
	core := strings.Trim(pattern, "*")
	switch {
	case lead && trail:
		return strings.Contains(name, core)
	case trail:
		return strings.HasPrefix(name, core)
	case lead:
		return strings.HasSuffix(name, core)
	}
	return name == core
}

// ReadConfig reads CONFIG GET * and groups it. Sensitive values are
// dropped here, before anything leaves the package.
func ReadConfig(ctx context.Context, srv redisview.Server) (Config, error) {
	c := srv.Client()
	m, err := c.ConfigGet(ctx, "*").Result()
	if err != nil {
		return Config{}, refusal("CONFIG GET", err)
	}
	return GroupConfig(m), nil
}

// GroupConfig groups parameters (name → value) in configGroups' order,
// each group by name, withholding sensitive values.
func GroupConfig(m map[string]string) Config {
	byGroup := map[string][]Param{}
	for name, v := range m {
		p := Param{Name: name, Value: v}
		if SensitiveConfig(name) {
			p = Param{Name: name, Withheld: true}
		}
		g := configGroupOf(strings.ToLower(name))
		byGroup[g] = append(byGroup[g], p)
	}
	var cfg Config
	for _, g := range configGroups {
		if ps := byGroup[g.name]; len(ps) > 0 {
			cfg.Groups = append(cfg.Groups, ConfigGroup{Name: g.name, Params: sortParams(ps)})
		}
	}
	if ps := byGroup["Other"]; len(ps) > 0 {
		cfg.Groups = append(cfg.Groups, ConfigGroup{Name: "Other", Params: sortParams(ps)})
	}
	return cfg
}

func sortParams(ps []Param) []Param {
	slices.SortFunc(ps, func(a, b Param) int { return strings.Compare(a.Name, b.Name) })
	return ps
}
