package handlers_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/internal/server"
	"github.com/keydeck/keydeck/redisview"
)

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// Connection passwords never reach pages, fragments or logs — neither with
// the right password nor with a wrong one that Redis rejects.
func TestPasswordsNeverShown(t *testing.T) {
	t.Parallel()
	const secret = "s3cret-pw-4711"
	rs := redistest.Start(t, "--requirepass", secret)
	logs := &syncBuf{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	redisview.SetDriverLogger(log)
	defer redisview.SetDriverLogger(slog.New(slog.DiscardHandler))
	f := startConsole(t, rs, server.Config{Conns: []redisview.ConnConfig{
		{Name: "good", URL: "redis://:" + secret + "@" + rs.Addr + "/0"},
		{Name: "bad", URL: "redis://default:" + secret + "x@" + rs.Addr + "/0"},
	}}, log)
	reg, srv := f.reg, f.srv
	waitFor(t, "both connections probed", func() bool {
		return !reg.All()[0].Status().Checked.IsZero() && !reg.All()[1].Status().Checked.IsZero()
	})
	var bodies []string
	for _, p := range []string{"/", "/c/good", "/c/bad", "/readyz"} {
		code, _, body := get(t, srv.URL+p)
		if code != http.StatusOK && !(p == "/readyz" && code == http.StatusServiceUnavailable) {
			t.Fatalf("%s: status %d", p, code)
		}
		bodies = append(bodies, body)
	}
	if !strings.Contains(bodies[1], ":xxxxx@") {
		t.Error("overview does not show the redacted URL")
	}
	if !strings.Contains(bodies[2], "WRONGPASS") && !strings.Contains(bodies[2], "disconnected") {
		t.Error("bad connection does not explain itself")
	}
	for i, b := range append(bodies, logs.String()) {
		if strings.Contains(b, secret) {
			t.Fatalf("output %d leaks the password", i)
		}
	}
}
