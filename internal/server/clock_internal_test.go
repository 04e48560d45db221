package server

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/crypto/bcrypt"

	"github.com/keydeck/keydeck/handlers"
	"github.com/keydeck/keydeck/internal/clock"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/leaderboard"
)

// lockedBuf is a log sink the console writes from its workers.
type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// The composition root gives its one clock to every worker, and none
// bypasses it: each one's timers are the fake's, and advancing the fake
// drives them. The users file poll reads an edit once its interval has
// passed; the keyspace watcher re-reads the flags after its idle 30 s; the
// leaderboard index rescans after Rescan; a limit sweep and a statistics
// sweep outlive their last viewer by their linger on that clock, so a test
// advances it instead of waiting half a minute; actions, pages and
// sessions read the time from it too.
func TestOneClockForEveryWorker(t *testing.T) {
	rs := redistest.Start(t)
	ctx := context.Background()
	board := func(id string) {
		t.Helper()
		if err := rs.Client(14).ZAdd(ctx, "mg:score:leaderboard:"+id, redis.Z{Score: 1, Member: "a"}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	board("2048")
	hash, _ := bcrypt.GenerateFromPassword([]byte("right-password"), bcrypt.MinCost)
	entry := func(name string) string {
		return "  - name: " + name + "\n    role: viewer\n    password_hash: \"" + string(hash) + "\"\n"
	}
	users := filepath.Join(t.TempDir(), "users.yaml")
	writeUsers := func(body string) {
		t.Helper()
		if err := os.WriteFile(users, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeUsers("users:\n" + entry("ada"))
	logs := &lockedBuf{}
	fake := clock.NewFake(time.Time{})
	s, err := Start(ctx, Config{
		Conns:     []redisview.ConnConfig{{Name: "main", URL: rs.URL(0)}},
		PackFor:   map[string]string{"main": "eisland"},
		Auth:      handlers.Auth{Secret: []byte("0123456789abcdef0123456789abcdef")},
		UsersFile: users, UsersPoll: 37 * time.Minute,
		AuditClient:  rs.Client(15),
		Clock:        fake,
		LimitsLinger: time.Hour, SweepLinger: 2 * time.Hour,
	}, slog.New(slog.NewTextHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got, want := s.cfg.Now(), fake.Now(); !got.Equal(want) {
		t.Fatalf("the console's time is %v, its clock says %v", got, want)
	}
	conn := s.reg.All()[0]

	// The users file poll: an edit is read when the poll falls due on the
	// clock (37 minutes: the wall clock would not get there).
	redistest.Eventually(t, 10*time.Second, "the keyspace watcher's first read of the flags", func() bool { return !conn.Keyspace().Checked.IsZero() })
	if got := conn.Keyspace().Checked; got.After(fake.Now()) {
		t.Fatalf("the keyspace watcher read the flags at %v, after its clock's %v", got, fake.Now())
	}
	writeUsers("users:\n" + entry("ada") + entry("sam"))
	fake.Advance(37 * time.Minute)
	redistest.Eventually(t, 10*time.Second, "the users file poll reads the edit 37 minutes (of the clock) later", func() bool {
		return strings.Contains(logs.String(), "added=[sam]")
	})

	// The keyspace watcher: notifications turned on are used once its
	// idle re-read falls due on the clock.
	if err := rs.Client(0).ConfigSet(ctx, "notify-keyspace-events", "KA").Err(); err != nil {
		t.Fatal(err)
	}
	fake.Advance(redisview.KeyspaceIdleRecheck)
	redistest.Eventually(t, 10*time.Second, "subscribed to keyspace events 30 s (of the clock) after they were turned on", func() bool { return conn.Keyspace().Subscribed })

	// The leaderboard index: its first scan, then a rescan after Rescan.
	if refs, _, err := s.boards.Refs(conn, 10*time.Second); err != nil || len(refs) != 1 {
		t.Fatalf("the index's first scan: %v %v", refs, err)
	}
	board("4096")
	fake.Advance(leaderboard.Rescan + time.Second)
	redistest.Eventually(t, 10*time.Second, "the index rescans once Rescan has passed on the clock", func() bool {
		refs, _, _ := s.boards.Refs(conn, 0)
		return len(refs) == 2
	})

	// The limit sweep and the statistics sweep linger on the clock.
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
