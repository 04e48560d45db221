package handlers_test

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/keydeck/keydeck/handlers"
	"github.com/keydeck/keydeck/internal/people"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/internal/server"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/redisview/limits"
	"github.com/keydeck/keydeck/redisview/scanbudget"
	"github.com/keydeck/keydeck/redisview/stats"
)

// console is a Keydeck built by the composition root (internal/server),
// exactly as cmd/web builds it, served over httptest.
type console struct {
	redis *redistest.Server
	reg   *redisview.Registry
	srv   *httptest.Server
	run   *action.Runner
	// routes is the console's route table.
	routes []handlers.Route
	// budget is a snapshot of a connection's scan budget.
	budget func(conn string) scanbudget.Stats
}

// startConsole builds cfg's console on rs. Unless cfg names them, its one
// connection is "main" (rs's database 0, eisland pack); the audit log and
// sign-in state live in rs's database 15; live views poll every 100 ms,
// the limit sweep re-reads every 200 ms and quota walkers step every
// 100 ms.
func startConsole(t *testing.T, rs *redistest.Server, cfg server.Config, log *slog.Logger) *console {
	t.Helper()
	if cfg.Conns == nil {
		cfg.Conns = []redisview.ConnConfig{{Name: "main", URL: rs.URL(0)}}
		if cfg.PackFor == nil {
			cfg.PackFor = map[string]string{"main": "eisland"}
		}
	}
	if cfg.AuditClient == nil {
		cfg.AuditClient = rs.Client(15)
	}
	if cfg.PollInterval == 0 {
		cfg.PollInterval = 100 * time.Millisecond
	}
	if cfg.MonitorInterval == 0 {
		cfg.MonitorInterval = 100 * time.Millisecond
	}
	if cfg.Sweep == (stats.SweepBudget{}) {
		cfg.Sweep = stats.SweepBudget{KeysPerSec: 100000, Count: 500}
	}
	if cfg.SweepLinger == 0 {
		cfg.SweepLinger = time.Second
	}
	// The limit sweep re-reads its kept rows, and a quota walker steps,
	// ten times as often as in production: a test that waits for a change
	// to show waits a tenth as long.
	if cfg.LimitsBudget.Refresh == 0 {
		cfg.LimitsBudget.Refresh = limits.DefaultBudget.Refresh / 10
	}
	if cfg.QuotaInterval == 0 {
		cfg.QuotaInterval = 100 * time.Millisecond
	}
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s, err := server.Start(context.Background(), cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		srv.Close()
		s.Close()
	})
	return &console{redis: rs, reg: s.Registry(), srv: srv, run: s.Actions(), routes: s.RouteTable(), budget: s.ScanBudgetStats}
}

// up waits until the monitor has seen the first connection up.
func (f *console) up(t *testing.T) *console {
	t.Helper()
	waitFor(t, "monitor sees redis", func() bool { return f.reg.All()[0].Status().Up })
	return f
}

// newFixture is an open console (no sign-in: everyone is admin).
func newFixture(t *testing.T, demo bool) *console {
	t.Helper()
	return startConsole(t, redistest.Start(t), server.Config{Demo: demo}, nil).up(t)
}

// newLiveFixture is an open console, for tests of live views.
func newLiveFixture(t *testing.T) *console { t.Helper(); return newFixture(t, false) }

const testSecret = "0123456789abcdef0123456789abcdef-test"

var testHash, _ = bcrypt.GenerateFromPassword([]byte("right-password"), bcrypt.MinCost)

func testUsers() *people.Users {
	return people.NewUsers(
		people.User{Name: "vera", Level: action.Viewer}.WithPassword(testHash),
		people.User{Name: "sam", Level: action.Support}.WithPassword(testHash),
		people.User{Name: "ada", Level: action.Admin, Email: "ada@example.com"}.WithPassword(testHash),
	)
}

// newAuthFixture serves the console with sign-in (vera, sam and ada),
// backed by rs (a fresh server when nil); two fixtures on one rs behave as
// two replicas.
func newAuthFixture(t *testing.T, rs *redistest.Server, mutate func(*handlers.Auth)) *console {
	t.Helper()
	if rs == nil {
		rs = redistest.Start(t)
	}
	return newAuthFixtureURL(t, rs, rs.URL(0), mutate)
}

// newAuthFixtureURL is newAuthFixture with connection "main" at url (an ACL
// user, say); the audit log and sign-in counters stay on rs's database 15.
func newAuthFixtureURL(t *testing.T, rs *redistest.Server, connURL string, mutate func(*handlers.Auth)) *console {
	t.Helper()
	cfg := server.Config{Conns: []redisview.ConnConfig{{Name: "main", URL: connURL}}, PackFor: map[string]string{"main": "eisland"},
		Auth: handlers.Auth{Users: testUsers(), Secret: []byte(testSecret)}}
	if mutate != nil {
		mutate(&cfg.Auth)
	}
	return startConsole(t, rs, cfg, nil).up(t)
}
