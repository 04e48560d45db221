// Package handlers turns HTTP requests and websocket subscriptions into
// calls on redisview and renders views. It never sends Redis commands itself.
package handlers

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/keydeck/keydeck/internal/people"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/leaderboard"
	"github.com/keydeck/keydeck/redisview/scanbudget"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/redisview/search"
	"github.com/keydeck/keydeck/redisview/stats"
	"github.com/keydeck/keydeck/views/format"
)

// Connections is what handlers need of the configured Redis servers.
type Connections interface {
	All() []*redisview.Conn
	Get(name string) (*redisview.Conn, error)
	Packs() []*schema.Pack
}

// Deps are the App's collaborators, each the small interface its pages
// use (declared beside them); the composition root (internal/server) gives
// the real ones, a test may give fakes.
type Deps struct {
	Conns Connections
	Hub   Hub
	// Actions previews and executes admin actions; nil disables them.
	Actions Actions
	// Audit reads the audit log; nil: the audit page says there is none.
	// When it also records writes of Keydeck's own (OwnAudit, as
	// action.Runner does), API token revocations are recorded in it.
	Audit AuditLog
	// Sweepers keep per-database statistics.
	Sweepers Sweepers
	// Leaderboards knows each connection's leaderboard keys.
	Leaderboards LeaderboardIndex
	// KeyWatch is told which keys live topics show, so that keyspace
	// notifications kick them; nil: topics only poll.
	KeyWatch KeyWatch
	Log      *slog.Logger
	Auth     Auth
	Demo     bool
	Now      func() time.Time
	// The background workers the pages read, each built, stopped and
	// awaited by the composition root (internal/server):
	// QuotaWalkers walk each connection's quotas while a page shows them
	// (the quotas and gateway key pages); LimitSweeps sweep each
	// connection's rate limits and locks while a page shows them;
	// VertiqueInventory caches each connection's vertique bucket walk;
	// UserStates hands a user page's scan state to its live topic. The
	// composition root gives every one; a console built without one (the
	// fake consoles of tests) must not open the pages that read it: such a
	// request fails (a recovered panic) and the live hub stays usable.
	QuotaWalkers      QuotaWalkers
	LimitSweeps       LimitSweeps
	VertiqueInventory VertiqueInventory
	UserStates        *search.UserHandoffs
	// Vertique is the secret vertique derives bucket keys with; zero: the
	// vertique page's lookup says how to give one.
	Vertique VertiqueSecret
	// Ctx ends with the server: open websockets close then (a hijacked
	// connection outlives http.Server.Shutdown otherwise).
	Ctx context.Context
	// ScanBudgets are the connections' scan budgets, by connection name:
	// every scan a person starts (a search, a user page's scans) draws
	// from its connection's, as its identity. A connection without one
	// scans unpaced.
	ScanBudgets map[string]*scanbudget.Budget
	// ConsoleHistory keeps each person's console lines; nil: the console
	// keeps none. ConsoleDangerous is --console-allow-dangerous.
	ConsoleHistory   ConsoleHistory
	ConsoleDangerous bool
	// Bulk runs bulk jobs (redisview/bulk.Engine); nil: no bulk actions.
	Bulk Bulk
}

// App holds the handlers' dependencies; build it with New.
type App struct {
	conns    Connections
	hub      Hub
	sweepers Sweepers
	actions  Actions
	audit    AuditLog
	own      OwnAudit // nil: no audit log records Keydeck's own writes
	log      *slog.Logger
	auth     Auth
	signer   people.Signer
	demo     bool
	now      func() time.Time
	ctx      context.Context
	// storeDown rate-limits the warning about an unreadable session store.
	storeDown people.StoreWarning

	// One reader per connection keeps its sparkline history across
	// poller restarts.
	overviews map[string]*stats.OverviewReader
	lbTracker leaderboard.Tracker
	lbIndex   LeaderboardIndex
	keyWatch  KeyWatch
	shares    *liveShares // each user's and address's live views
	reads     sharedReads // the server pages' reads, shared (sharedread.go)

	quotaWalkers QuotaWalkers
	scanBudgets  map[string]*scanbudget.Budget
	vertique     VertiqueSecret
	vtInventory  VertiqueInventory
	limits       LimitSweeps
	userStates   *search.UserHandoffs

	// The command console's history and --console-allow-dangerous.
	consoleHistory   ConsoleHistory
	consoleDangerous bool

	bulk Bulk // nil: no bulk actions
}

// New builds the App.
func New(d Deps) *App {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Ctx == nil {
		d.Ctx = context.Background()
	}
	if d.Auth.SessionTTL <= 0 {
		d.Auth.SessionTTL = 12 * time.Hour
	}
	if d.Auth.UserHeader == "" {
		d.Auth.UserHeader = "X-Forwarded-User"
	}
	if d.Auth.EmailHeader == "" {
		d.Auth.EmailHeader = "X-Forwarded-Email"
	}
	switch d.Auth.ProxyMatch {
	case "":
		d.Auth.ProxyMatch = "name"
	case "name", "email":
	default:
		panic("handlers: Auth.ProxyMatch must be name or email")
	}
	if len(d.Auth.Secret) < 32 {
		panic("handlers: Auth.Secret must be at least 32 bytes")
	}
	if d.Auth.Limiter == nil {
		panic("handlers: Auth.Limiter is required")
	}
	if d.Auth.Users != nil && d.Auth.Sessions == nil {
		panic("handlers: Auth.Sessions is required with Users")
	}
	if d.KeyWatch == nil {
		d.KeyWatch = &redisview.KeyWatch{}
	}
	a := &App{
		conns:     d.Conns,
		hub:       d.Hub,
		sweepers:  d.Sweepers,
		actions:   d.Actions,
		audit:     d.Audit,
		auth:      d.Auth,
		signer:    people.NewSigner(d.Auth.Secret),
		log:       d.Log,
		demo:      d.Demo,
		now:       d.Now,
		ctx:       d.Ctx,
		overviews: map[string]*stats.OverviewReader{},
		lbIndex:   d.Leaderboards,
		keyWatch:  d.KeyWatch,
		shares:    newLiveShares(),
		vertique:  d.Vertique,

		scanBudgets:  d.ScanBudgets,
		quotaWalkers: d.QuotaWalkers,
		vtInventory:  d.VertiqueInventory,
		limits:       d.LimitSweeps,
		userStates:   d.UserStates,

		consoleHistory:   d.ConsoleHistory,
		consoleDangerous: d.ConsoleDangerous,
		bulk:             d.Bulk,
	}
	a.own, _ = d.Audit.(OwnAudit)
	for _, c := range d.Conns.All() {
		a.overviews[c.Name] = stats.NewOverviewReader(c)
		// A state change shows at once rather than at the next tick.
		c.OnChange(func(redisview.Status) { a.hub.Kick(OverviewTopic{Conn: c.Name}.String()) })
	}
	return a
}

// scanTap is who's share of conn's scan budget for one request's scans
// (their wait ends with the request); nil when the connection has none.
func (a *App) scanTap(conn, who string) search.Budget {
	b := a.scanBudgets[conn]
	if b == nil {
		return nil
	}
	return b.For(who)
}

// scanPacer is who's share of conn's scan budget for a live topic's
// scans, keeping its place in the queue between polls; the topic's source
// closes it. nil when the connection has none.
func (a *App) scanPacer(conn, who string) *scanbudget.Pacer {
	b := a.scanBudgets[conn]
	if b == nil {
		return nil
	}
	return b.Pacer(who)
}

// budgetWait says, in words, that a scan of who's waits for conn's scan
// budget.
func (a *App) budgetWait(conn, who string) string {
	st := a.scanBudgets[conn].Stats()
	s := fmt.Sprintf("Waiting for scan budget: the scans people start on %s share %s keys/s, split evenly between the people whose scans wait", conn, format.Count(int64(st.Rate)))
	if st.Identities > 1 {
		s += fmt.Sprintf(" (%d now)", st.Identities)
	}
	if n := st.Waiting[who]; n > 1 {
		s += fmt.Sprintf("; %d scans of the same person take turns in one share", n)
	}
	return s + "."
}
