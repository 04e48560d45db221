package handlers

import (
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"

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
	// Probe: the route answers its own JSON (a health probe, not a page).
	Probe bool
	// API is the page's twin operation (route.API…): asked for JSON, the
	// page answers exactly what it answers (pageJSON). A page without one
	// answers 406, NoJSON saying where its data is in the API.
	API    string
	NoJSON string

	twin    *apiTwin
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
	account := func(r Route) Route {
		r.mw = append(r.mw, notByToken)
		r.NoJSON = "Accounts and tokens are for people; a script uses its token with the API (" + route.APIOpenAPI + ")."
		return r
	}
	// A page's JSON is its API twin's answer (pageJSON); the others say
	// where their data is.
	json := func(r Route, t *apiTwin) Route { r.twin, r.API = t, t.path; return r }
	htmlOnly := func(r Route, where string) Route { r.NoJSON = where; return r }
	probe := func(r Route) Route { r.Probe = true; return r }
	const get, post = http.MethodGet, http.MethodPost
	const previewIn = "An action is previewed by POST " + route.APIPreview + " {kind, conn, db, key, args}: what will change and a confirmation token, which POST " + route.APIExecute + " {token} runs."
	assets := public(get, route.Static, echo.WrapHandler(http.StripPrefix("/static/", staticHandler(static.FS))))
	assets.Asset = true
	return append([]Route{
		// Public: probes, assets, signing in and out.
		probe(public(get, route.Healthz, a.healthz)),
		probe(public(get, route.Readyz, a.readyz)),
		assets,
		htmlOnly(public(get, route.Login, a.loginPage), "Scripts sign in with an API token (Authorization: Bearer kdt_…), made on "+route.AccountTokens+", with the API ("+route.APIOpenAPI+")."),
		account(public(post, route.Login, a.login)),
		account(public(post, route.Logout, a.logout)),

		json(view(get, route.Home, a.home), twin(route.APIConnections, nil)),
		json(view(get, route.Overview, a.overview), twin(route.APIOverview, nil)),
		json(view(get, route.Database, a.dbPage), twin(route.APIDBStats, nil)),
		json(view(get, route.Keys, a.keysPage), twin(route.APIKeys, nil)),
		json(view(get, route.Key, a.keyPage), twin(route.APIKey, map[string]string{"k": "key", "m": "member"}, "view", "trail")),
		json(view(get, route.Audit, a.auditPage), twin(route.APIAudit, nil, "id")), // ?id=: a record's link; the page lists them all
		htmlOnly(view(get, route.Leaderboards, a.leaderboardList), "A leaderboard family's keys are listed by GET "+route.APIKeys+"?family=ID; a board's entries by GET "+route.APILeaderboard+"."),
		json(view(get, route.Leaderboard, a.leaderboardPage), leaderboardTwin()),
		htmlOnly(view(get, route.Live, a.websocket), "It is the pages' websocket; the API's operations ("+route.APIOpenAPI+") answer the same data."),
		account(view(get, route.Account, a.accountPage)),
		account(view(get, route.AccountTokens, a.tokensPage)),
		account(view(post, route.AccountTokens, a.createToken)),
		account(view(post, route.RevokeToken, a.revokeToken)),
		json(view(get, route.Search, a.searchPage), twin(route.APISearch, nil)),
		json(view(get, route.Quotas, a.quotasPage), twin(route.APIQuotas, nil)),
		json(view(get, route.GatewayKey, a.gatewayKeyPage), twin(route.APIGatewayKey, nil)),
		json(view(get, route.Vertique, a.vertiquePage), vertiqueTwin()),
		json(view(get, route.Bans, a.bansPage), bansTwin()),
		json(view(get, route.Limits, a.limitsPage), rowsTwin(route.APILimits)),
		json(view(get, route.Locks, a.locksPage), rowsTwin(route.APILocks)),
		json(view(get, route.Violations, a.violationsPage), twin(route.APIViolations, nil)),
		json(view(get, route.User, a.userPage), twin(route.APIUser, nil)),
		account(view(post, route.SignOutEverywhere, a.signOutEverywhere)),
		account(admin(post, route.ClearLockout, a.clearLockout)),

		// The action forms are the pages' way to act; a script acts through
		// the API's actions (preview → execute, undo), which answer the
		// same confirmations as JSON: these say which one.
		htmlOnly(act(post, route.Preview, a.previewAction), previewIn),
		// A preview changes nothing, so links may open it, but only from
		// this console: it reads the keys it names, which a cross-site page
		// must not be able to make a signed-in admin do.
		htmlOnly(act(get, route.Preview, a.previewAction, sameSiteNavigation), previewIn),
		htmlOnly(act(get, route.UndoPreview, a.undoPreview, sameSiteNavigation), "An undo is previewed by POST "+route.APIUndo+" {conn, db, record: the audit record's id}, and confirmed by POST "+route.APIExecute+" {token}."),
		htmlOnly(act(post, route.Execute, a.executeAction), "A previewed action is executed by POST "+route.APIExecute+" {token: the confirmation token POST "+route.APIPreview+" answered}."),
		htmlOnly(act(post, route.BansRebuild, a.rebuildBans), "A ban list's bloom is rebuilt from its set by the action "+action.KindRebuildBloom+": POST "+route.APIPreview+" {kind: \""+action.KindRebuildBloom+"\", conn, db, key: the list's bloom_key (GET "+route.APIBans+")}, then POST "+route.APIExecute+" {token}."),
	}, a.moreRoutes()...)
}

// moreRoutes are the routes each area lists in its own file: the
// server's pages, the console, and changing data (issue 22: edits, bulk
// actions, export and import).
func (a *App) moreRoutes() []Route {
	return slices.Concat(a.auditRecordRoutes(), a.serverRoutes(), a.consoleRoutes(), a.editRoutes(), a.bulkRoutes(), a.transferRoutes())
}

// consoleRoutes are the command console's: GET shows the form, POST runs
// a read or previews a write (CSRF-checked like every POST, though a read
// writes nothing). Any role; the console applies each role's rules.
func (a *App) consoleRoutes() []Route {
	const consoleIn = "The console is for people; scripts read through the API's operations (" + route.APIOpenAPI + ") and write through its actions."
	return []Route{
		{Method: http.MethodGet, Path: route.Console, Level: action.Viewer, handler: a.consolePage, NoJSON: consoleIn},
		{Method: http.MethodPost, Path: route.Console, Level: action.Viewer, handler: a.runConsole, NoJSON: consoleIn},
	}
}

// serverRoutes are the server's own pages (issue 21): one server of a
// connection each (?node= on a cluster), read by any role; what they
// change goes through the actions (POST /actions/preview).
func (a *App) serverRoutes() []Route {
	page := func(path string, h echo.HandlerFunc, noJSON string) Route {
		return Route{Method: http.MethodGet, Path: path, Level: action.Viewer, handler: h, NoJSON: noJSON}
	}
	return []Route{
		page(route.Server, a.serverPage, "A server's INFO, memory report and configuration have no API operation yet; a setting is changed through the API's actions: POST "+route.APIPreview+" {kind: \""+action.KindConfigSet+"\", conn, db: 0, args: {parameter, value, node}}."),
		page(route.Clients, a.clientsPage, "A server's client list has no API operation yet; a client is killed through the API's actions: POST "+route.APIPreview+" {kind: \""+action.KindKillClient+"\", conn, db: 0, args: {id, node}}."),
		page(route.Slowlog, a.slowlogPage, "No API operation ("+route.APIOpenAPI+") answers the slowlog yet; this page (live over "+route.Live+") is its only view."),
		page(route.Latency, a.latencyPage, "No API operation ("+route.APIOpenAPI+") answers the latency monitor yet; this page is its only view."),
		page(route.PubSub, a.pubsubPage, "No API operation ("+route.APIOpenAPI+") answers Pub/Sub yet; this page (its watches live over "+route.Live+") is its only view."),
	}
}

// leaderboardTwin: the page's ?k= (or ?kq=, its key query-escaped once
// more by the page's forms), ?start= and ?n= are the API's key, start
// and count. With ?member= the page looks a member up: that is get-key's
// lookup (the member's score and rank).
func leaderboardTwin() *apiTwin {
	kq := func(page url.Values) (url.Values, error) {
		if page.Has("kq") {
			page = maps.Clone(page)
			k, err := url.QueryUnescape(page.Get("kq"))
			if err != nil {
				return nil, fmt.Errorf("%w: kq: want a query-escaped key", route.ErrParam)
			}
			if !page.Has("k") {
				page.Set("k", k)
			}
			page.Del("kq")
		}
		if !page.Has("n") { // the page shows DefaultRows; the API's count defaults lower
			page = maps.Clone(page)
			page.Set("n", strconv.Itoa(route.DefaultRows))
		}
		return page, nil
	}
	t := twin(route.APILeaderboard, map[string]string{"k": "key", "start": "start", "n": "count"})
	t.own, t.prepare = []string{"kq"}, kq
	lookup := twin(route.APIKey, map[string]string{"k": "key", "member": "member"}, "start", "n")
	lookup.own, lookup.prepare = []string{"kq"}, kq
	t.pick = func(page url.Values) *apiTwin {
		if page.Get("member") != "" {
			return lookup
		}
		return nil
	}
	return t
}

// bansTwin: the Bans page lists (list-bans), or checks a name (?check=:
// ban-check, which takes the name alone: the list's paging is the page's).
func bansTwin() *apiTwin {
	t := twin(route.APIBans, nil)
	check := twin(route.APIBanCheck, map[string]string{"check": "name"}, "list", "filter", "cursor")
	t.pick = func(page url.Values) *apiTwin {
		if page.Get("check") != "" {
			return check
		}
		return nil
	}
	return t
}

// rowsTwin: the Rate limits and Locks pages' ?q= is the API's filter; the
// page shows ten rows of a family from ?off= (with ?fam= and ?db=), the
// operation answers every kept row.
func rowsTwin(path string) *apiTwin { return twin(path, nil, "fam", "db", "off") }

// vertiqueTwin: vertique's page is its inventory (get-vertique), or with
// a lookup (?policy=…) its finder (find-vertique-bucket).
func vertiqueTwin() *apiTwin {
	t := twin(route.APIVertique, nil)
	find := twin(route.APIVertiqueBkt, nil)
	t.pick = func(page url.Values) *apiTwin {
		for _, p := range []string{"policy", "revision", "key", "enc"} {
			if page.Get(p) != "" {
				return find
			}
		}
		return nil
	}
	return t
}

// Routes registers the route table.
func (a *App) Routes(e *echo.Echo) {
	e.HTTPErrorHandler = a.errorHandler
	e.Use(a.recoverer, a.requestLog, securityHeaders, a.checkHost, a.identify, a.limitBody, a.sameOriginWrite)
	// The API first: a page's JSON is its twin operation's, whose query
	// parameters the page's are checked against.
	params := apiQueryParams(a.NewAPI(e))
	for _, r := range a.RouteTable() {
		mw := r.mw
		if !r.Public {
			mw = append([]echo.MiddlewareFunc{a.requireLevel(r.Level)}, mw...)
		}
		if !r.Asset && !r.Probe {
			// First: the twin's guard answers an anonymous or unfit JSON
			// request as a problem, never a redirect to sign in.
			mw = append([]echo.MiddlewareFunc{a.pageJSON(e, r, params)}, mw...)
		}
		e.Add(r.Method, r.Path, r.handler, mw...)
	}
}
