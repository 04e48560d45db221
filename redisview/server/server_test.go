package server

import (
	"context"
	"errors"
	"github.com/keydeck/keydeck/redisview"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/redistest"
)

const (
	passMarker = "PASS-MARKER-7f3a"
	authMarker = "AUTH-MARKER-9c1e"
)

// One server for the package's tests, with a password: what a
// production server has, and what must never be read out.
func start(t *testing.T) (*redistest.Server, func(opts ...func(*redis.Options)) *redis.Client) {
	t.Helper()
	s := redistest.Start(t, "--requirepass", passMarker)
	client := func(opts ...func(*redis.Options)) *redis.Client {
		o := &redis.Options{Addr: s.Addr, Password: passMarker}
		for _, f := range opts {
			f(o)
		}
		c := redis.NewClient(o)
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	return s, client
}

func TestServerReaders(t *testing.T) {
	ctx := context.Background()
	_, client := start(t)
	c := client()
	if err := c.ConfigSet(ctx, "masterauth", authMarker).Err(); err != nil {
		t.Fatal(err)
	}
	t.Run("info", func(t *testing.T) {
		if err := c.ConfigResetStat(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		c.Set(ctx, "present", "1", 0)
		c.Get(ctx, "present")
		c.Get(ctx, "absent")
		c.Get(ctx, "absent2")
		info, err := ReadInfo(ctx, redisview.ServerFor(c))
		if err != nil {
			t.Fatal(err)
		}
		for _, sec := range []string{"Server", "Clients", "Memory", "Persistence", "Stats", "Replication", "Keyspace"} {
			if _, ok := info.Section(sec); !ok {
				t.Errorf("no section %s", sec)
			}
		}
		hr, ok := info.Field("keyspace_hit_ratio")
		if !ok || hr.Shown != "33.3%" || hr.Help == "" {
			t.Errorf("hit ratio %+v", hr)
		}
		frag, _ := info.Field("mem_fragmentation_ratio")
		if !strings.HasSuffix(frag.Shown, "×") || !strings.Contains(frag.Help, "fragmentation") {
			t.Errorf("fragmentation %+v", frag)
		}
		used, _ := info.Field("used_memory")
		if !strings.HasSuffix(used.Shown, "B") || used.Help == "" {
			t.Errorf("used_memory %+v", used)
		}
		if f, ok := info.Field("used_memory_human"); ok {
			t.Errorf("human twin kept: %+v", f)
		}
		for _, name := range []string{"evicted_keys", "rejected_connections"} {
			if f, ok := info.Field(name); !ok || f.Help == "" || f.Shown != "0" {
				t.Errorf("%s %+v", name, f)
			}
		}
		up, _ := info.Field("uptime_in_seconds")
		if !strings.HasSuffix(up.Shown, "s") {
			t.Errorf("uptime %+v", up)
		}
	})
	t.Run("config", func(t *testing.T) {
		cfg, err := ReadConfig(ctx, redisview.ServerFor(c))
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]Param{}
		groups := map[string]string{}
		for _, g := range cfg.Groups {
			for _, p := range g.Params {
				seen[p.Name], groups[p.Name] = p, g.Name
				if strings.Contains(p.Value, passMarker) || strings.Contains(p.Value, authMarker) {
					t.Errorf("%s read out: %q", p.Name, p.Value)
				}
			}
		}
		for _, name := range []string{"requirepass", "masterauth", "masteruser", "aclfile", "tls-key-file-pass"} {
			if p, ok := seen[name]; ok && (!p.Withheld || p.Value != "") {
				t.Errorf("%s not withheld: %+v", name, p)
			}
		}
		if !seen["requirepass"].Withheld || groups["requirepass"] != "Security" {
			t.Errorf("requirepass %+v in %s", seen["requirepass"], groups["requirepass"])
		}
		for name, group := range map[string]string{"maxmemory": "Memory", "slowlog-log-slower-than": "Slowlog & latency", "port": "Network",
			"appendonly": "Persistence", "maxclients": "Clients", "repl-backlog-size": "Replication"} {
			if groups[name] != group || seen[name].Value == "" {
				t.Errorf("%s: %+v in %q, want %q", name, seen[name], groups[name], group)
			}
		}
		if _, _, err := ConfigValue(ctx, redisview.ServerFor(c), "requirepass"); !errors.Is(err, ErrSensitive) {
			t.Errorf("ConfigValue(requirepass): %v", err)
		}
		if v, ok, err := ConfigValue(ctx, redisview.ServerFor(c), "maxmemory-policy"); err != nil || !ok || v != "noeviction" {
			t.Errorf("maxmemory-policy %q %v %v", v, ok, err)
		}
		if _, ok, err := ConfigValue(ctx, redisview.ServerFor(c), "no-such-thing"); err != nil || ok {
			t.Errorf("unknown parameter: %v %v", ok, err)
		}
	})
	t.Run("clients", func(t *testing.T) {
		named := client(func(o *redis.Options) { o.ClientName = "billing-worker" })
		own := client(func(o *redis.Options) { o.ClientName = OwnClientName })
		named.Ping(ctx)
		own.Ping(ctx)
		list, err := Clients(ctx, redisview.ServerFor(c))
		if err != nil {
			t.Fatal(err)
		}
		var found, ownFound bool
		for _, cl := range list {
			switch cl.Name {
			case "billing-worker":
				found = !cl.Own && cl.ID > 0 && cl.Addr != "" && cl.User == "default" && cl.Cmd == "ping" && cl.TotMem > 0
			case OwnClientName:
				ownFound = cl.Own
			}
		}
		if !found || !ownFound {
			t.Fatalf("named %v own %v in %+v", found, ownFound, list)
		}
		id := named.ClientID(ctx).Val()
		cl, ok, err := ClientByID(ctx, redisview.ServerFor(c), id)
		if err != nil || !ok || cl.Name != "billing-worker" {
			t.Fatalf("by id: %+v %v %v", cl, ok, err)
		}
		if _, ok, err := ClientByID(ctx, redisview.ServerFor(c), 1<<40); err != nil || ok {
			t.Fatalf("unknown id: %v %v", ok, err)
		}
	})
	t.Run("memory", func(t *testing.T) {
		for _, proto := range []int{2, 3} {
			mc := client(func(o *redis.Options) { o.Protocol = proto })
			stats, err := ReadMemoryStats(ctx, redisview.ServerFor(mc))
			if err != nil {
				t.Fatal(err)
			}
			byName := map[string]Field{}
			for _, f := range stats {
				byName[f.Name] = f
			}
			if f := byName["total.allocated"]; !strings.HasSuffix(f.Shown, "B") || f.Help == "" {
				t.Errorf("RESP%d total.allocated %+v", proto, f)
			}
			if f, ok := byName["db.0.overhead.hashtable.main"]; !ok || !strings.HasSuffix(f.Shown, "B") {
				t.Errorf("RESP%d db.0 %+v in %v", proto, f, byName)
			}
			if f := byName["keys.count"]; f.Shown != "1" {
				t.Errorf("RESP%d keys.count %+v", proto, f)
			}
		}
		doc, err := ReadMemoryDoctor(ctx, redisview.ServerFor(c))
		if err != nil || doc == "" {
			t.Fatalf("doctor %q %v", doc, err)
		}
	})
	t.Run("refused", func(t *testing.T) {
		if err := c.Do(ctx, "ACL", "SETUSER", "looker", "on", ">pw", "~*", "+@all", "-config", "-memory", "-client").Err(); err != nil {
			t.Fatal(err)
		}
		lc := client(func(o *redis.Options) { o.Username, o.Password = "looker", "pw" })
		_, err := ReadConfig(ctx, redisview.ServerFor(lc))
		if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "ACL") {
			t.Errorf("config: %v", err)
		}
		if _, err := ReadMemoryStats(ctx, redisview.ServerFor(lc)); !errors.Is(err, ErrRefused) {
			t.Errorf("memory: %v", err)
		}
		if _, err := Clients(ctx, redisview.ServerFor(lc)); !errors.Is(err, ErrRefused) {
			t.Errorf("clients: %v", err)
		}
		if _, err := ReadInfo(ctx, redisview.ServerFor(lc)); err != nil {
			t.Errorf("info: %v", err)
		}
	})
}

func TestSensitiveConfig(t *testing.T) {
	for name, want := range map[string]bool{
		"requirepass": true, "MASTERAUTH": true, "masteruser": true, "aclfile": true, "tls-key-file": true,
		"tls-key-file-pass": true, "tls-client-key-file-pass": true, "tls-client-key-file": true, "sentinel-auth-pass": true,
		"maxmemory": false, "tls-cert-file": false, "tls-port": false, "acllog-max-len": false, "slowlog-log-slower-than": false, "save": false,
	} {
		if SensitiveConfig(name) != want {
			t.Errorf("SensitiveConfig(%q) = %v", name, !want)
		}
	}
}
