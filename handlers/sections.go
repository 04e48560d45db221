package handlers

import (
	"sync"

	"github.com/labstack/echo/v4"

	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/views"
)

// section is one entry of a connection's sub-navigation: a page of the
// connection that needs no parameter beyond it.
type section struct {
	Label string
	Path  string // the registered route
	URL   func(conn string) string
}

// sections lists a connection's pages in the order the bar shows them. A
// section whose route is not in the route table is left out, so the bar
// never links to a page that does not exist.
var sections = []section{
	{"Overview", route.Overview, route.OverviewURL},
	{"Rate limits", route.Limits, route.LimitsURL},
	{"Locks", route.Locks, route.LocksURL},
	{"Quotas", route.Quotas, route.QuotasURL},
	{"Bans", route.Bans, route.BansURL},
	{"vertique", route.Vertique, route.VertiqueURL},
	{"Search", route.Search, route.SearchPath},
	// The server's own pages (issue 21).
	{"Slowlog", route.Slowlog, route.SlowlogURL},
	{"Latency", route.Latency, route.LatencyURL},
	{"Clients", route.Clients, route.ClientsURL},
	{"Server", route.Server, route.ServerInfoURL},
	{"Pub/Sub", route.PubSub, route.PubSubURL},
	{"Console", route.Console, route.ConsoleURL},
}

var (
	registeredOnce sync.Once
	registered     map[string]bool
)

// sectionNav is the sub-navigation of connection conn, the current
// request's section marked.
func (a *App) sectionNav(c echo.Context, conn string) []views.NavItem {
	registeredOnce.Do(func() {
		registered = map[string]bool{}
		for _, r := range a.RouteTable() {
			registered[r.Path] = true
		}
	})
	var out []views.NavItem
	for _, s := range sections {
		if registered[s.Path] {
			out = append(out, views.NavItem{Name: s.Label, Href: s.URL(conn), Active: c.Path() == s.Path})
		}
	}
	return out
}
