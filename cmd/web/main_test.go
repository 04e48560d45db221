package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/keydeck/keydeck/handlers"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/internal/server"
)

// TestMain lets tests run the real main() in a child process, and stops
// the browser tests' shared Chromium.
func TestMain(m *testing.M) {
	if os.Getenv("KEYDECK_TEST_RUN_MAIN") == "1" {
		os.Args = append([]string{"keydeck"}, strings.Fields(os.Getenv("KEYDECK_TEST_ARGS"))...)
		main()
		os.Exit(0)
	}
	// The browser tests mostly wait (for a page, a websocket frame, a
	// sweep), each on a console, servers and a browser context of its own:
	// three at a time overlap their waits. The SIGHUP test (it signals the
	// whole process) does not call t.Parallel, so it runs before the
	// others start.
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		if err := flag.Set("test.parallel", "3"); err != nil {
			panic(err)
		}
	}
	code := m.Run()
	redistest.CloseBrowser()
	os.Exit(code)
}

func TestInvalidFlagExitsWithStatus2(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args, want string
	}{
		{"--redis nonsense", "keydeck: invalid value for flag --redis: want NAME=URL"},
		{"--redis a=redis://:hunter2@h:bad", "keydeck: invalid value for flag --redis: a: invalid Redis URL"},
		{"--addr nope", "keydeck: invalid value \"nope\" for flag --addr"},
	}
	for _, tt := range tests {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "KEYDECK_TEST_RUN_MAIN=1", "KEYDECK_TEST_ARGS="+tt.args)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 {
			t.Fatalf("%s: err = %v, want exit status 2", tt.args, err)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(lines) != 1 || !strings.HasPrefix(lines[0], tt.want) {
			t.Fatalf("%s: output %q, want one line starting %q", tt.args, out, tt.want)
		}
		if strings.Contains(string(out), "hunter2") {
			t.Fatalf("%s: output leaks the password", tt.args)
		}
	}
}

// Each input refused at start-up is one line naming it, exit status 2,
// before any Redis is connected to: the Redis named here does not answer,
// and trying it would log a connection error first.
func TestStartupInputErrorsExitWithStatus2(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	emptyHash := dir + "/users.yaml"
	if err := os.WriteFile(emptyHash, []byte("users:\n  - name: ada\n    role: admin\n    password_hash: \"\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	nullHash := dir + "/users-null.yaml"
	if err := os.WriteFile(nullHash, []byte("users:\n  - name: ada\n    role: admin\n    password_hash:\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, args, stdin string
		want              []string // every one in the line
	}{
		{"password hash key with no value", "--addr 127.0.0.1:0 --redis a=redis://127.0.0.1:1 --users " + nullHash, "",
			[]string{"keydeck: invalid value for flag --users: " + nullHash + ": user 1 (ada): password_hash is empty"}},
		{"port out of range", "--addr 127.0.0.1:99999 --redis a=redis://127.0.0.1:1", "",
			[]string{`keydeck: invalid value "127.0.0.1:99999" for flag --addr: port 99999 out of range`}},
		{"empty password hash", "--addr 127.0.0.1:0 --redis a=redis://127.0.0.1:1 --users " + emptyHash, "",
			[]string{"keydeck: invalid value for flag --users: " + emptyHash + ": user 1 (ada): password_hash is empty"}},
		{"empty password hash in the demo", "--addr 127.0.0.1:0 --users " + emptyHash, "",
			[]string{"keydeck: invalid value for flag --users: " + emptyHash + ": user 1 (ada): password_hash is empty"}},
		{"short password", "hash-password", "short\n",
			[]string{"keydeck hash-password: the password read from standard input is shorter than 8 characters"}},
		{"empty password", "hash-password", "",
			[]string{"keydeck hash-password: the password read from standard input is empty"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// An input that is not refused starts the console, which would
			// serve until killed.
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "KEYDECK_TEST_RUN_MAIN=1", "KEYDECK_TEST_ARGS="+tt.args)
			cmd.Stdin = strings.NewReader(tt.stdin)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 2 {
				t.Fatalf("err = %v, want exit status 2; stderr:\n%s", err, stderr.String())
			}
			if stdout.Len() != 0 {
				t.Fatalf("stdout %q, want nothing", stdout.String())
			}
			line := strings.TrimSuffix(stderr.String(), "\n")
			if strings.Contains(line, "\n") {
				t.Fatalf("stderr is not one line:\n%s", stderr.String())
			}
			for _, w := range tt.want {
				if !strings.Contains(line, w) {
					t.Fatalf("stderr %q, want it to contain %q", line, w)
				}
			}
		})
	}
}

// A malformed pack stops start-up with its file, line and what is wrong.
func TestMalformedPackStopsStartup(t *testing.T) {
	t.Parallel()
	f := t.TempDir() + "/broken.yaml"
	body := "name: broken\ntitle: Broken\nfamilies:\n  - id: x\n    pattern: \"a:{b}\"\n    type: string\n    role: tokenbucket\n    domain: D\n    ttl: any\n"
	if err := os.WriteFile(f, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := parseFlags("keydeck", []string{"--addr", "127.0.0.1:0", "--redis", "a=redis://127.0.0.1:1", "--pack", f}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	err = run(t.Context(), cfg, slog.New(slog.DiscardHandler), nil)
	if err == nil || !strings.Contains(err.Error(), "broken.yaml:7") || !strings.Contains(err.Error(), "tokenbucket") {
		t.Fatalf("err = %v, want broken.yaml:7 naming the unknown role", err)
	}
}

func TestHashPasswordFromStdin(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "KEYDECK_TEST_RUN_MAIN=1", "KEYDECK_TEST_ARGS=hash-password")
	cmd.Stdin = strings.NewReader("correct horse battery\nignored second line\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("hash-password: %v", err)
	}
	hash := strings.TrimSpace(string(out))
	if bcrypt.CompareHashAndPassword([]byte(hash), []byte("correct horse battery")) != nil {
		t.Fatalf("output %q is not a bcrypt hash of the first line", hash)
	}
	for _, bad := range []string{"", "short\n"} {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "KEYDECK_TEST_RUN_MAIN=1", "KEYDECK_TEST_ARGS=hash-password")
		cmd.Stdin = strings.NewReader(bad)
		if out, err := cmd.CombinedOutput(); err == nil {
			t.Fatalf("password %q accepted: %s", bad, out)
		}
	}
}

// Without users, Keydeck serves only loopback addresses unless --read-only.
func TestRefusesOpenNonLoopback(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	cfg, err := parseFlags("keydeck", []string{"--addr", "0.0.0.0:0", "--redis", "a=" + rs.URL(0)}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	err = run(t.Context(), cfg, slog.New(slog.DiscardHandler), nil)
	if err == nil || !strings.Contains(err.Error(), "refusing to serve 0.0.0.0:0 without sign-in") {
		t.Fatalf("err = %v", err)
	}
	// With --read-only the same configuration is accepted (checked without
	// binding: tests listen on loopback only), and nobody may act.
	srv, err := server.Start(t.Context(), server.Config{Conns: cfg.Conns, Addr: cfg.Addr, Auth: handlers.Auth{ReadOnly: true}}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("read-only: %v", err)
	}
	defer srv.Close()
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	res, err := http.Get(ts.URL + "/c/a")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.Contains(string(body), `data-testid="open-access-banner"`) || !strings.Contains(string(body), `data-testid="read-only-banner"`) {
		t.Fatalf("read-only open console: %d %.300s", res.StatusCode, body)
	}
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// kill -HUP reloads the users file (and says so) instead of ending Keydeck.
func TestSIGHUPReloadsUsersFile(t *testing.T) {
	rs := redistest.Start(t)
	hash, _ := bcrypt.GenerateFromPassword([]byte("right-password"), bcrypt.MinCost)
	users := t.TempDir() + "/users.yaml"
	write := func(role string) {
		body := "users:\n  - name: ada\n    role: " + role + "\n    password_hash: \"" + string(hash) + "\"\n"
		if err := os.WriteFile(users, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("admin")
	cfg, err := parseFlags("keydeck", []string{"--addr", "127.0.0.1:0", "--redis", "a=" + rs.URL(0), "--users", users}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuf{}
	ctx, cancel := context.WithCancel(t.Context())
	ready := make(chan string, 1)
	errc := make(chan error, 1)
	go func() { errc <- run(ctx, cfg, slog.New(slog.NewTextHandler(logs, nil)), ready) }()
	select {
	case <-ready:
	case err := <-errc:
		t.Fatalf("run: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("console did not start")
	}
	if !strings.Contains(logs.String(), `msg="users file loaded" path=`+users+" users=1") {
		t.Fatalf("start-up did not log how many users it loaded:\n%s", logs)
	}
	write("viewer")
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	redistest.Eventually(t, 5*time.Second, "the reload logged after SIGHUP", func() bool { return strings.Contains(logs.String(), "ada: admin→viewer") })
	if !strings.Contains(logs.String(), "SIGHUP: reloading the users file") {
		t.Fatalf("SIGHUP not logged:\n%s", logs)
	}
	cancel()
	if err := <-errc; err != nil {
		t.Fatalf("run: %v", err)
	}
}
