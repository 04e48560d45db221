package server

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/keydeck/keydeck/handlers"
	"github.com/keydeck/keydeck/internal/clock"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
)

// The composition root gives its one clock to the workers: a limit sweep
// and a statistics sweep outlive their last viewer by their linger on that
// clock, so a test advances it instead of waiting half a minute; actions,
// pages and sessions read the time from it too.
func TestOneClockForEveryWorker(t *testing.T) {
	rs := redistest.Start(t)
	fake := clock.NewFake(time.Time{})
	s, err := Start(context.Background(), Config{
		Conns:        []redisview.ConnConfig{{Name: "main", URL: rs.URL(0)}},
		PackFor:      map[string]string{"main": "eisland"},
		Auth:         handlers.Auth{Secret: []byte("0123456789abcdef0123456789abcdef")},
		AuditClient:  rs.Client(15),
		Clock:        fake,
		LimitsLinger: time.Hour, SweepLinger: 2 * time.Hour,
	}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got, want := s.cfg.Now(), fake.Now(); !got.Equal(want) {
		t.Fatalf("the console's time is %v, its clock says %v", got, want)
	}
	conn := s.reg.All()[0]
	_, release := s.limits.Acquire(conn)
	release()
	_, release = s.sweepers.Acquire(conn, 0)
	release()
	if s.limits.Running() != 1 || s.sweepers.Running() != 1 {
		t.Fatalf("after release: %d limit sweeps, %d statistics sweeps running; want each lingering", s.limits.Running(), s.sweepers.Running())
	}
	fake.Advance(time.Hour)
	redistest.Eventually(t, 10*time.Second, "the limit sweep ends an hour (of the console's clock) after its last viewer", func() bool { return s.limits.Running() == 0 })
	if s.sweepers.Running() != 1 {
		t.Fatalf("the statistics sweep ended before its linger of 2h")
	}
	fake.Advance(time.Hour)
	redistest.Eventually(t, 10*time.Second, "the statistics sweep ends 2h after its last viewer", func() bool { return s.sweepers.Running() == 0 })
}
