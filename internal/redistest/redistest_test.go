package redistest

import (
	"bufio"
	"context"
	"net"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"
)

// fatalTB records Fatal and the cleanups registered through it; Fatal
// ends the calling goroutine as testing's does.
type fatalTB struct {
	testing.TB
	mu       sync.Mutex
	fatal    string
	cleanups []func()
}

func (f *fatalTB) Fatalf(format string, args ...any) { f.Fatal(format) }
func (f *fatalTB) Fatal(args ...any) {
	f.mu.Lock()
	f.fatal = "fatal"
	f.mu.Unlock()
	runtime.Goexit()
}
func (f *fatalTB) Cleanup(fn func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cleanups = append(f.cleanups, fn)
}

// A redis-server that never answers in time fails the start, and its
// cleanup still kills it (it was registered only after a good start, and
// the server was left running).
func TestStartThatTimesOutLeavesNoServer(t *testing.T) {
	f := &fatalTB{TB: t}
	port := FreePort(t)
	var wg sync.WaitGroup
	wg.Go(func() {
		// Listening where the readiness check does not dial: it times out.
		Start(f, "--port", strconv.Itoa(port), "--bind", "127.0.0.2")
	})
	wg.Wait()
	if f.fatal == "" {
		t.Fatal("the start did not fail")
	}
	addr := net.JoinHostPort("127.0.0.2", strconv.Itoa(port))
	if c, err := net.DialTimeout("tcp", addr, time.Second); err != nil {
		t.Fatalf("the test server is not running at %s: %v", addr, err)
	} else {
		c.Close()
	}
	if len(f.cleanups) == 0 {
		t.Fatalf("a failed start registered no cleanup: redis-server left running at %s", addr)
	}
	for _, fn := range f.cleanups {
		fn()
	}
	Eventually(t, 5*time.Second, "no redis-server left at "+addr, func() bool {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
		}
		return err != nil
	})
}

// TestStartOnATakenPortGetsItsOwnServer: when the free port is taken
// between choosing it and redis-server binding it (another test's server
// answering there), Start must not hand out that other server: it starts
// its own on another port.
func TestStartOnATakenPortGetsItsOwnServer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() { // another "server": answers +PONG to every line
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					if _, err := r.ReadString('\n'); err != nil {
						return
					}
					_, _ = c.Write([]byte("+PONG\r\n"))
				}
			}()
		}
	}()
	taken := l.Addr().(*net.TCPAddr).Port
	picks := 0
	pickPort = func(t testing.TB) int {
		if picks++; picks == 1 {
			return taken
		}
		return FreePort(t)
	}
	t.Cleanup(func() { pickPort = FreePort })
	s := Start(t)
	if s.Port == taken {
		t.Fatalf("Start handed out the server already on port %d", taken)
	}
	if err := s.Client(0).Set(context.Background(), "k", "v", 0).Err(); err != nil {
		t.Fatalf("the started server at %s: %v", s.Addr, err)
	}
}
