// Package redistest starts real redis-server processes for tests.
//
// Every test that needs Redis gets its own server on a free loopback port, so
// tests never share state and may run in parallel. The binary is
// $KEYDECK_REDIS_SERVER, or redis-server from PATH; when neither exists the
// test fails (it never skips: a test that silently skips cannot fail).
package redistest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Server is one redis-server process owned by a test.
type Server struct {
	t    testing.TB
	bin  string
	dir  string
	Port int
	Addr string // 127.0.0.1:port
	// BusPort is a cluster node's bus port (StartCluster's nodes).
	BusPort int
	bus     bool

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
	args []string
	// argv, when set, is the whole command line (a sentinel's: its
	// config file first), used instead of the defaults and args.
	argv []string
}

// Binary returns the redis-server binary tests use.
func Binary() (string, error) {
	if p := os.Getenv("KEYDECK_REDIS_SERVER"); p != "" {
		return p, nil
	}
	p, err := exec.LookPath("redis-server")
	if err != nil {
		return "", fmt.Errorf("redis-server not found: install it (make test does) or set KEYDECK_REDIS_SERVER")
	}
	return p, nil
}

// FreePort returns a loopback TCP port that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// pickPort chooses a server's port (a test may replace it).
var pickPort = FreePort

// Start launches a fresh redis-server and registers its shutdown with t.Cleanup.
// Extra arguments are passed to redis-server as config directives, e.g.
// "--notify-keyspace-events", "KEA".
func Start(t testing.TB, extra ...string) *Server {
	t.Helper()
	return startServer(t, false, extra...)
}

// startServer is Start; bus gives the server a cluster bus port of its
// own (--cluster-port), chosen again with its port when one was taken.
func startServer(t testing.TB, bus bool, extra ...string) *Server {
	t.Helper()
	bin, err := Binary()
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{t: t, bin: bin, dir: t.TempDir(), args: extra, bus: bus}
	// Registered before start waits for it: a start that fails still
	// kills the process.
	t.Cleanup(s.Stop)
	for attempt := 1; ; attempt++ {
		s.Port = pickPort(t)
		s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port))
		if bus {
			s.BusPort = pickPort(t)
		}
		// A free port may be taken before redis-server binds it (by
		// another test's server): ours then exits, and another port is
		// chosen.
		err := s.launch()
		if err == nil {
			return s
		}
		if !errors.Is(err, errPortTaken) || attempt == 5 {
			t.Fatal(err)
		}
	}
}

// errPortTaken: the server could not bind its port, or another process
// answered there.
var errPortTaken = errors.New("port taken")

func (s *Server) start() {
	s.t.Helper()
	if err := s.launch(); err != nil {
		s.t.Fatal(err)
	}
}

// launch runs the server and waits until it answers as itself: the
// process that answers INFO on its port is the one it started.
func (s *Server) launch() error {
	args := []string{
		"--port", strconv.Itoa(s.Port),
		"--bind", "127.0.0.1",
		"--save", "",
		"--appendonly", "no",
		"--dir", s.dir,
		"--databases", "16",
	}
	if s.bus {
		args = append(args, "--cluster-port", strconv.Itoa(s.BusPort))
	}
	args = append(args, s.args...)
	if s.argv != nil {
		args = s.argv
	}
	cmd := exec.Command(s.bin, args...)
	logPath := filepath.Join(s.dir, "redis.log")
	logf, err := os.Create(logPath)
	if err != nil {
		return err
	}
	cmd.Stdout = logf
	cmd.Stderr = logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("start redis-server: %v", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); logf.Close(); close(done) }()
	s.mu.Lock()
	s.cmd, s.done = cmd, done
	s.mu.Unlock()

	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case <-done:
			b, _ := os.ReadFile(logPath)
			s.mu.Lock()
			s.cmd = nil
			s.mu.Unlock()
			if bytes.Contains(b, []byte("Address already in use")) {
				return fmt.Errorf("%w: redis-server on %s: %s", errPortTaken, s.Addr, lastLine(b))
			}
			return fmt.Errorf("redis-server exited early:\n%s", b)
		default:
		}
		if answersAs(s.Addr, cmd.Process.Pid, logPath) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redis-server did not answer on %s", s.Addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// answersAs reports whether the server on addr is process pid (INFO
// server's process_id) and has loaded its data (INFO persistence's
// loading:0 — a server loading its AOF answers INFO and WATCH already, and
// the keys it loads then touch what a test watched); a server that wants a
// password (NOAUTH) is ours when its log says it is ready.
func answersAs(addr string, pid int, logPath string) bool {
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("INFO server persistence\r\n")); err != nil {
		return false
	}
	r := bufio.NewReader(c)
	line, err := r.ReadString('\n')
	if err != nil {
		return false
	}
	if strings.HasPrefix(line, "-NOAUTH") {
		b, _ := os.ReadFile(logPath)
		return bytes.Contains(b, []byte("Ready to accept connections"))
	}
	n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "$")))
	if !strings.HasPrefix(line, "$") || err != nil || n < 0 {
		return false // another server's answer, or not ready (LOADING)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return false
	}
	loaded := !bytes.Contains(body, []byte("\nloading:")) || bytes.Contains(body, []byte("\nloading:0\r")) // a sentinel loads nothing
	return bytes.Contains(body, []byte("\nprocess_id:"+strconv.Itoa(pid)+"\r")) && loaded
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}

// Stop kills the server (idempotent).
func (s *Server) Stop() {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Kill()
	<-done
}

// Restart stops the server and starts it again on the same port, empty.
func (s *Server) Restart() {
	s.Stop()
	s.start()
}

// URL is a redis:// URL for database db.
func (s *Server) URL(db int) string { return fmt.Sprintf("redis://%s/%d", s.Addr, db) }

// Client returns a go-redis client on database db, closed at test end.
func (s *Server) Client(db int) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: s.Addr, DB: db})
	s.t.Cleanup(func() { _ = c.Close() })
	return c
}

// CommandCalls returns the number of calls of each command from INFO commandstats.
func (s *Server) CommandCalls(ctx context.Context) (map[string]int64, error) {
	c := redis.NewClient(&redis.Options{Addr: s.Addr})
	defer c.Close()
	txt, err := c.Info(ctx, "commandstats").Result()
	if err != nil {
		return nil, err
	}
	return ParseCommandStats(txt), nil
}

// ParseCommandStats parses the body of INFO commandstats into calls per command.
func ParseCommandStats(txt string) map[string]int64 {
	out := map[string]int64{}
	for _, line := range strings.Split(txt, "\n") {
		line = strings.TrimSpace(line)
		name, rest, ok := strings.Cut(line, ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		for _, kv := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(kv, "=")
			if k == "calls" {
				n, _ := strconv.ParseInt(v, 10, 64)
				out[strings.TrimPrefix(name, "cmdstat_")] = n
			}
		}
	}
	return out
}

// Tests stop servers on purpose; go-redis's dial-retry lines would bury the
// test output.
func init() { redis.SetLogger(quietDriver{}) }

type quietDriver struct{}

func (quietDriver) Printf(context.Context, string, ...any) {}
