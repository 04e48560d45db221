// Package handlers turns HTTP requests and websocket subscriptions into
// calls on redisview and renders views. It never sends Redis commands itself.
package handlers

import (
	"log/slog"
	"time"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/live"
)

// Connections is what handlers need of the configured Redis servers.
type Connections interface {
	All() []*redisview.Conn
	Get(name string) (*redisview.Conn, error)
}

// Deps are the App's collaborators.
type Deps struct {
	Conns Connections
	Hub   *live.Hub
	// Sweepers keep per-database statistics.
	Sweepers *redisview.Sweepers
	Log      *slog.Logger
	Demo     bool
	Now      func() time.Time
}

// App holds the handlers' dependencies; build it with New.
type App struct {
	conns    Connections
	hub      *live.Hub
	sweepers *redisview.Sweepers
	log      *slog.Logger
	demo     bool
	now      func() time.Time

	// One reader per connection keeps its sparkline history across
	// poller restarts.
	overviews map[string]*redisview.OverviewReader
	topics    *topics
}

// New builds the App.
func New(d Deps) *App {
	if d.Now == nil {
		d.Now = time.Now
	}
	a := &App{
		conns:     d.Conns,
		hub:       d.Hub,
		sweepers:  d.Sweepers,
		log:       d.Log,
		demo:      d.Demo,
		now:       d.Now,
		overviews: map[string]*redisview.OverviewReader{},
	}
	for _, c := range d.Conns.All() {
		a.overviews[c.Name] = redisview.NewOverviewReader(c)
		// A state change shows at once rather than at the next tick.
		c.OnChange(func(redisview.Status) { a.hub.Kick(overviewTopic(c.Name)) })
	}
	a.topics = newTopics(a)
	return a
}
