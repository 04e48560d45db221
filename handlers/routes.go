package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/static"
)

// Route is one entry of the console's route table.
type Route struct {
	Method, Path string
	// Public routes need no sign-in; the others need at least Level.
	Public bool
	Level  action.Level
	// Asset: the route serves files, not a page or a probe, and never
	// answers JSON.
	Asset bool

	handler echo.HandlerFunc
	mw      []echo.MiddlewareFunc
}

// RouteTable is every route of the console, in one place: Routes registers
// it, and tests walk it.
func (a *App) RouteTable() []Route {
	public := func(method, path string, h echo.HandlerFunc) Route {
		return Route{Method: method, Path: path, Public: true, handler: h}
	}
	// Reading needs any role.
	view := func(method, path string, h echo.HandlerFunc) Route {
		return Route{Method: method, Path: path, Level: action.Viewer, handler: h}
	}
	// Admin's own settings of the console (not Redis actions).
	admin := func(method, path string, h echo.HandlerFunc) Route {
		return Route{Method: method, Path: path, Level: action.Admin, handler: h}
	}
	// Actions: the runner checks each kind's role again; support is the
	// lowest role with any action.
	act := func(method, path string, h echo.HandlerFunc, mw ...echo.MiddlewareFunc) Route {
		return Route{Method: method, Path: path, Level: action.Support, handler: h, mw: append([]echo.MiddlewareFunc{a.writable}, mw...)}
	}
	// Accounts, sessions and tokens are managed by people, never by an
	// API token.
	account := func(r Route) Route { r.mw = append(r.mw, notByToken); return r }
	const get, post = http.MethodGet, http.MethodPost
	assets := public(get, route.Static, echo.WrapHandler(http.StripPrefix("/static/", staticHandler(static.FS))))
	assets.Asset = true
	return []Route{
		// Public: probes, assets, signing in and out.
		public(get, route.Healthz, a.healthz),
		public(get, route.Readyz, a.readyz),
		assets,
		public(get, route.Login, a.loginPage),
		account(public(post, route.Login, a.login)),
		account(public(post, route.Logout, a.logout)),

		view(get, route.Home, a.home),
		view(get, route.Overview, a.overview),
		view(get, route.Database, a.dbPage),
		view(get, route.Keys, a.keysPage),
		view(get, route.Key, a.keyPage),
		view(get, route.Audit, a.auditPage),
		view(get, route.Leaderboards, a.leaderboardList),
		view(get, route.Leaderboard, a.leaderboardPage),
		view(get, route.Live, a.websocket),
		account(view(get, route.Account, a.accountPage)),
		account(view(get, route.AccountTokens, a.tokensPage)),
		account(view(post, route.AccountTokens, a.createToken)),
		account(view(post, route.RevokeToken, a.revokeToken)),
		view(get, route.Search, a.searchPage),
		view(get, route.Quotas, a.quotasPage),
		view(get, route.GatewayKey, a.gatewayKeyPage),
		view(get, route.Vertique, a.vertiquePage),
		view(get, route.Bans, a.bansPage),
		view(get, route.Limits, a.limitsPage),
		view(get, route.Locks, a.locksPage),
		view(get, route.Violations, a.violationsPage),
		view(get, route.User, a.userPage),
		account(view(post, route.SignOutEverywhere, a.signOutEverywhere)),
		account(admin(post, route.ClearLockout, a.clearLockout)),

		act(post, route.Preview, a.previewAction),
		// A preview changes nothing, so links may open it, but only from
		// this console: it reads the keys it names, which a cross-site page
		// must not be able to make a signed-in admin do.
		act(get, route.Preview, a.previewAction, sameSiteNavigation),
		act(get, route.UndoPreview, a.undoPreview, sameSiteNavigation),
		act(post, route.Execute, a.executeAction),
		act(post, route.BansRebuild, a.rebuildBans),
	}
}

// Routes registers the route table.
func (a *App) Routes(e *echo.Echo) {
	e.HTTPErrorHandler = a.errorHandler
	e.Use(a.recoverer, a.requestLog, securityHeaders, a.checkHost, limitBody, a.identify, a.sameOriginWrite)
	for _, r := range a.RouteTable() {
		mw := r.mw
		if !r.Public {
			mw = append([]echo.MiddlewareFunc{a.requireLevel(r.Level)}, mw...)
		}
		e.Add(r.Method, r.Path, r.handler, mw...)
	}
	a.NewAPI(e)
}
