package handlers

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/keydeck/keydeck/internal/live"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/leaderboard"
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
	const secret = "s3cret-pw-4711"
	rs := redistest.Start(t, "--requirepass", secret)
	logs := &syncBuf{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	redisview.SetDriverLogger(log)
	defer redisview.SetDriverLogger(slog.New(slog.DiscardHandler))
	reg, err := redisview.NewRegistry([]redisview.ConnConfig{
		{Name: "good", URL: "redis://:" + secret + "@" + rs.Addr + "/0"},
		{Name: "bad", URL: "redis://default:" + secret + "x@" + rs.Addr + "/0"},
	}, log)
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	ctx, cancel := context.WithCancel(context.Background())
	lb := leaderboard.NewIndex(ctx)
	defer func() { cancel(); lb.Wait() }()
	go reg.Monitor(ctx, 50*time.Millisecond)
	hub := live.New(ctx, log, 50*time.Millisecond)
	e := echo.New()
	New(Deps{Conns: reg, Hub: hub, Leaderboards: lb, Log: log, Auth: openAuth(rs)}).Routes(e)
	srv := httptest.NewServer(e)
	defer srv.Close()
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
