package main

import (
	"fmt"
	"github.com/keydeck/keydeck/redisview/stats"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/demo"
	"github.com/keydeck/keydeck/redisview"
)

func TestParseFlags(t *testing.T) {
	t.Parallel()
	env := func(m map[string]string) func(string) string {
		return func(k string) string { return m[k] }
	}
	none := env(nil)
	tests := []struct {
		name    string
		args    []string
		getenv  func(string) string
		want    Config
		wantErr string // substring; "" means success
	}{
		{name: "defaults run the demo", args: nil, getenv: none,
			want: Config{Addr: "127.0.0.1:8080", PollInterval: time.Second, LogFormat: "text", LogLevel: "info"}},
		{name: "two connections", args: []string{"--addr", "127.0.0.1:9090", "--redis", "eisland=redis://127.0.0.1:6379", "--redis", "gateway=redis://127.0.0.1:6380/2"}, getenv: none,
			want: Config{Addr: "127.0.0.1:9090", PollInterval: time.Second, LogFormat: "text", LogLevel: "info", Conns: []redisview.ConnConfig{
				{Name: "eisland", URL: "redis://127.0.0.1:6379"}, {Name: "gateway", URL: "redis://127.0.0.1:6380/2"}}}},
		{name: "tls, user and password, unix socket", args: []string{"--redis", "a=rediss://bob:pw@db.internal:6380", "--redis", "b=unix:///run/redis.sock?db=3"}, getenv: none,
			want: Config{Addr: "127.0.0.1:8080", PollInterval: time.Second, LogFormat: "text", LogLevel: "info", Conns: []redisview.ConnConfig{
				{Name: "a", URL: "rediss://bob:pw@db.internal:6380"}, {Name: "b", URL: "unix:///run/redis.sock?db=3"}}}},
		{name: "environment", args: nil, getenv: env(map[string]string{"KEYDECK_REDIS": "eisland=redis://h:1, gateway=redis://h:2"}),
			want: Config{Addr: "127.0.0.1:8080", PollInterval: time.Second, LogFormat: "text", LogLevel: "info", Conns: []redisview.ConnConfig{
				{Name: "eisland", URL: "redis://h:1"}, {Name: "gateway", URL: "redis://h:2"}}}},
		{name: "flags win over environment", args: []string{"--redis", "x=redis://h:9"}, getenv: env(map[string]string{"KEYDECK_REDIS": "eisland=redis://h:1"}),
			want: Config{Addr: "127.0.0.1:8080", PollInterval: time.Second, LogFormat: "text", LogLevel: "info", Conns: []redisview.ConnConfig{{Name: "x", URL: "redis://h:9"}}}},
		{name: "missing equals", args: []string{"--redis", "redis://h:1"}, getenv: none, wantErr: "invalid value for flag --redis: want NAME=URL"},
		{name: "bad scheme", args: []string{"--redis", "a=http://h:1"}, getenv: none, wantErr: `flag --redis: a: invalid Redis URL "http://h:1": scheme "http" not supported`},
		{name: "bad name", args: []string{"--redis", "Bad Name=redis://h:1"}, getenv: none, wantErr: `flag --redis: name "Bad Name"`},
		{name: "duplicate name", args: []string{"--redis", "a=redis://h:1", "--redis", "a=redis://h:2"}, getenv: none, wantErr: `connection "a" named twice`},
		{name: "bad port", args: []string{"--redis", "a=redis://:s3cret@h:notaport"}, getenv: none, wantErr: "flag --redis: a: invalid Redis URL"},
		{name: "port out of range", args: []string{"--redis", "a=redis://:s3cret@h:99999"}, getenv: none, wantErr: `invalid value for flag --redis: a: invalid Redis URL "redis://:xxxxx@h:99999": port 99999 out of range (want 1–65535)`},
		{name: "port zero", args: []string{"--redis", "a=redis://h:0"}, getenv: none, wantErr: "flag --redis: a: invalid Redis URL \"redis://h:0\": port 0 out of range"},
		{name: "port out of range in the environment", args: nil, getenv: env(map[string]string{"KEYDECK_REDIS": "a=redis://h:70000"}), wantErr: "invalid KEYDECK_REDIS entry: a: invalid Redis URL \"redis://h:70000\": port 70000 out of range"},
		{name: "bad env entry", args: nil, getenv: env(map[string]string{"KEYDECK_REDIS": "nope"}), wantErr: "invalid KEYDECK_REDIS entry"},
		{name: "bad addr", args: []string{"--addr", "8080"}, getenv: none, wantErr: "flag --addr"},
		{name: "poll interval too short", args: []string{"--poll-interval", "1ms"}, getenv: none, wantErr: "flag --poll-interval"},
		{name: "unknown flag", args: []string{"--nope"}, getenv: none, wantErr: "flag provided but not defined: --nope"},
		// Flags are named as the docs and --help write them.
		{name: "missing argument", args: []string{"--addr"}, getenv: none, wantErr: "flag needs an argument: --addr"},
		{name: "unparsable duration", args: []string{"--poll-interval", "soon"}, getenv: none, wantErr: `invalid value "soon" for flag --poll-interval: parse error`},
		{name: "stray argument", args: []string{"serve"}, getenv: none, wantErr: `unexpected argument "serve"`},
		{name: "pack-for names an unknown connection", args: []string{"--redis", "a=redis://h:1", "--pack-for", "b=eisland"}, getenv: none, wantErr: `flag --pack-for: no connection named "b"`},
		{name: "pack-for without equals", args: []string{"--pack-for", "eisland"}, getenv: none, wantErr: "flag --pack-for: want NAME=PACK"},
		{name: "sweep rate out of range", args: []string{"--sweep-rate", "0"}, getenv: none, wantErr: "flag --sweep-rate"},
		{name: "sweep count out of range", args: []string{"--sweep-count", "100000"}, getenv: none, wantErr: "flag --sweep-count"},
		{name: "bad proxy match", args: []string{"--proxy-match", "either"}, getenv: none, wantErr: `invalid value "either" for flag --proxy-match: want name or email`},
		{name: "bad log format", args: []string{"--log-format", "xml"}, getenv: none, wantErr: "flag --log-format"},
		{name: "addr port out of range", args: []string{"--addr", "127.0.0.1:99999"}, getenv: none, wantErr: `invalid value "127.0.0.1:99999" for flag --addr: port 99999 out of range (want 0–65535)`},
		{name: "addr port negative", args: []string{"--addr", "127.0.0.1:-1"}, getenv: none, wantErr: `invalid value "127.0.0.1:-1" for flag --addr: port -1 out of range`},
		{name: "addr port not a number", args: []string{"--addr", "127.0.0.1:web"}, getenv: none, wantErr: `invalid value "127.0.0.1:web" for flag --addr: port "web" is not a number`},
		{name: "addr without a port", args: []string{"--addr", "127.0.0.1:"}, getenv: none, wantErr: `invalid value "127.0.0.1:" for flag --addr: port "" is not a number`},
		{name: "bad metrics addr", args: []string{"--metrics-addr", "9100"}, getenv: none, wantErr: `invalid value "9100" for flag --metrics-addr: want HOST:PORT`},
		{name: "metrics addr port out of range", args: []string{"--metrics-addr", "127.0.0.1:70000"}, getenv: none, wantErr: `flag --metrics-addr: port "70000" out of range`},
		{name: "addr any port", args: []string{"--addr", "[::1]:0"}, getenv: none,
			want: Config{Addr: "[::1]:0", PollInterval: time.Second, LogFormat: "text", LogLevel: "info"}},
		{name: "addr highest port", args: []string{"--addr", ":65535"}, getenv: none,
			want: Config{Addr: ":65535", PollInterval: time.Second, LogFormat: "text", LogLevel: "info"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseFlags("keydeck", tt.args, tt.getenv)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), ":pw@") {
					t.Fatalf("error leaks a password: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if got.Addr != tt.want.Addr || got.PollInterval != tt.want.PollInterval || got.LogFormat != tt.want.LogFormat || got.LogLevel != tt.want.LogLevel {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
			if len(got.Conns) != len(tt.want.Conns) {
				t.Fatalf("conns = %v, want %v", got.Conns, tt.want.Conns)
			}
			for i := range got.Conns {
				if got.Conns[i] != tt.want.Conns[i] {
					t.Fatalf("conn %d = %v, want %v", i, got.Conns[i], tt.want.Conns[i])
				}
			}
			if got.Demo() != (len(tt.want.Conns) == 0) {
				t.Fatalf("Demo() = %v", got.Demo())
			}
		})
	}
}

func TestParseFlagsReadyzDetail(t *testing.T) {
	t.Parallel()
	none := func(string) string { return "" }
	cfg, err := parseFlags("keydeck", nil, none)
	if err != nil || cfg.ReadyzDetail {
		t.Fatalf("default: %v %v, want off", cfg.ReadyzDetail, err)
	}
	cfg, err = parseFlags("keydeck", []string{"--readyz-detail"}, none)
	if err != nil || !cfg.ReadyzDetail {
		t.Fatalf("--readyz-detail: %v %v", cfg.ReadyzDetail, err)
	}
}

func TestParseFlagsProxyMatch(t *testing.T) {
	t.Parallel()
	none := func(string) string { return "" }
	for args, want := range map[string]string{"": "name", "--proxy-match=name": "name", "--proxy-match=email": "email"} {
		cfg, err := parseFlags("keydeck", strings.Fields(args), none)
		if err != nil || cfg.ProxyMatch != want {
			t.Errorf("%q: %q %v, want %q", args, cfg.ProxyMatch, err, want)
		}
	}
}

// --search-rate is each connection's scan budget for the scans people
// start; unset, it follows --sweep-rate (searching costs Redis no more
// than a sweep); it must be a positive number of keys per second.
func TestParseFlagsSearchRate(t *testing.T) {
	t.Parallel()
	none := func(string) string { return "" }
	tests := []struct {
		args    string
		want    int
		wantErr string
	}{
		{args: "", want: 1600},
		{args: "--sweep-rate 4000", want: 1600}, // the sweep's budget is its own
		{args: "--search-rate 800", want: 800},
		{args: "--search-rate=800 --sweep-rate 4000", want: 800},
		{args: "--search-rate 1000000", want: 1_000_000},
		{args: "--search-rate 0", wantErr: "invalid value 0 for flag --search-rate: want 10 to 1000000 keys per second"},
		{args: "--search-rate -5", wantErr: "invalid value -5 for flag --search-rate: want 10 to 1000000 keys per second"},
		{args: "--search-rate 9", wantErr: "invalid value 9 for flag --search-rate: want 10 to 1000000"},
		{args: "--search-rate 1000001", wantErr: "flag --search-rate: want 10 to 1000000"},
		{args: "--search-rate fast", wantErr: `invalid value "fast" for flag --search-rate`},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			cfg, err := parseFlags("keydeck", strings.Fields(tt.args), none)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || cfg.SearchRate != tt.want {
				t.Fatalf("SearchRate = %d (%v), want %d", cfg.SearchRate, err, tt.want)
			}
		})
	}
}

// vertique's secret comes from the environment variable or the file the
// flags name; errors name where, never what; the demo uses its own.
func TestVertiqueSecretFlags(t *testing.T) {
	t.Parallel()
	const secret = "s3cret-value-never-printed"
	env := func(k string) string {
		if k == "VT_SECRET" {
			return secret
		}
		return ""
	}
	file := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(file, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	redis := []string{"--redis", "v=redis://127.0.0.1:6379"}
	for _, tt := range []struct {
		args     []string
		want     string // the secret read; "" none
		from     string
		demo     bool
		parseErr bool
		readErr  bool
	}{
		{args: append([]string{"--vertique-secret-env", "VT_SECRET"}, redis...), want: secret, from: "environment variable VT_SECRET"},
		{args: append([]string{"--vertique-secret-file", file}, redis...), want: secret, from: "file " + file},
		{args: append([]string{"--vertique-secret-env", "NOT_SET"}, redis...), readErr: true},
		{args: append([]string{"--vertique-secret-file", file + ".missing"}, redis...), readErr: true},
		{args: []string{"--vertique-secret-env", "VT_SECRET", "--vertique-secret-file", file}, parseErr: true},
		{args: redis},
		{args: nil, want: demo.DemoSecret, demo: true},
	} {
		cfg, err := parseFlags("keydeck", tt.args, env)
		if (err != nil) != tt.parseErr {
			t.Errorf("%q: parse error %v", tt.args, err)
			continue
		}
		if err != nil {
			continue
		}
		got, err := vertiqueSecret(cfg, env, os.ReadFile)
		if (err != nil) != tt.readErr {
			t.Errorf("%q: read error %v", tt.args, err)
		}
		if err != nil && strings.Contains(err.Error(), secret) {
			t.Errorf("the error shows the secret: %v", err)
		}
		if string(got.Secret) != tt.want || got.Demo != tt.demo || (tt.from != "" && got.From != tt.from) {
			t.Errorf("%q: secret %q from %q (demo %v)", tt.args, got.Secret, got.From, got.Demo)
		}
		if strings.Contains(fmt.Sprintf("%v %+v %#v", got, got, got), secret) && tt.want != "" {
			t.Errorf("%q: the secret prints", tt.args)
		}
	}
}

// --console-allow-dangerous is off unless given; it takes a boolean.
func TestParseFlagsConsoleAllowDangerous(t *testing.T) {
	t.Parallel()
	none := func(string) string { return "" }
	tests := []struct {
		args    string
		want    bool
		wantErr string
	}{
		{args: "", want: false},
		{args: "--console-allow-dangerous", want: true},
		{args: "--console-allow-dangerous=true", want: true},
		{args: "--console-allow-dangerous=false", want: false},
		{args: "--read-only --console-allow-dangerous", want: true},
		{args: "--console-allow-dangerous=maybe", wantErr: "console-allow-dangerous"},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			cfg, err := parseFlags("keydeck", strings.Fields(tt.args), none)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || cfg.ConsoleAllowDangerous != tt.want {
				t.Fatalf("ConsoleAllowDangerous = %v (%v), want %v", cfg.ConsoleAllowDangerous, err, tt.want)
			}
		})
	}
}

// The console never runs CONFIG SET (it sends it to the server page's
// audited form), so the flag's help must not offer it.
func TestConsoleAllowDangerousHelp(t *testing.T) {
	t.Parallel()
	var cfg Config
	fs, _ := defineFlags("keydeck", &cfg)
	f := fs.Lookup("console-allow-dangerous")
	if f == nil {
		t.Fatal("no --console-allow-dangerous flag")
	}
	if strings.Contains(f.Usage, "CONFIG SET") || !strings.Contains(f.Usage, "FLUSHDB") {
		t.Fatalf("help = %q: it must name what the flag lets run (FLUSHDB …), not CONFIG SET", f.Usage)
	}
}

// The sweep's budget: a share of a Redis core (per cent on the command
// line), a key rate cap, the sample per family; each checked.
func TestParseFlagsSweepBudget(t *testing.T) {
	none := func(string) string { return "" }
	tests := []struct {
		args    string
		want    stats.SweepBudget
		wantErr string
	}{
		{args: "", want: stats.DefaultSweepBudget},
		{args: "--sweep-cpu 0.5 --sweep-sample 300 --sweep-rate 5000 --sweep-count 100", want: stats.SweepBudget{KeysPerSec: 5000, Count: 100, CPU: 0.005, Sample: 300}},
		{args: "--sweep-cpu 100", want: stats.SweepBudget{KeysPerSec: 20000, Count: 200, CPU: 1, Sample: 2000}},
		{args: "--sweep-cpu 0", wantErr: "invalid value 0 for flag --sweep-cpu: want 0.01 to 100"},
		{args: "--sweep-cpu 101", wantErr: "invalid value 101 for flag --sweep-cpu"},
		{args: "--sweep-cpu NaN", wantErr: "flag --sweep-cpu"},
		{args: "--sweep-sample 9", wantErr: "invalid value 9 for flag --sweep-sample: want 10 to 1000000 keys per family"},
		{args: "--sweep-sample 1000001", wantErr: "flag --sweep-sample"},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			cfg, err := parseFlags("keydeck", strings.Fields(tt.args), none)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || cfg.Sweep != tt.want {
				t.Fatalf("Sweep = %+v (%v), want %+v", cfg.Sweep, err, tt.want)
			}
		})
	}
}
