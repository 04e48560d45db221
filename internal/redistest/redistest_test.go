package redistest

import (
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
