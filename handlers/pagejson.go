package handlers

import (
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/danielgtaylor/huma/v2"
	"github.com/labstack/echo/v4"

	"github.com/keydeck/keydeck/internal/apiv1"
	"github.com/keydeck/keydeck/internal/route"
)

// A page asked for JSON (wantsJSON) answers what its twin operation of
// the API answers to the same request: the same body type, mapped by the
// same handler from the same reads, the same problem details, the same
// statuses — one JSON, not two. The twin is declared in the route table
// (Route.API): pageJSON serves the twin's handler in place of the page,
// before the page's own checks (the API's guard does them, as problem
// details). A page without a twin answers 406, a problem naming where its
// data is in the API; no page reflects its view model.

// apiTwin is a page's twin: the API operation (a GET of route.API…) and
// how the page's query becomes the operation's.
type apiTwin struct {
	path string
	// rename: page parameter → the operation's name for it.
	rename map[string]string
	// pageOnly are parameters the page alone reads — which slice of the
	// answer it scrolls to, how it shows a value — while the operation
	// answers the whole (or the same value every way): they are left out.
	pageOnly []string
	// own are parameters the twin's prepare reads itself.
	own []string
	// prepare, when set, rewrites the page's query first (the
	// leaderboard's ?kq=, the Bans page's check).
	prepare func(page url.Values) (url.Values, error)
	// pick, when set, may choose another twin for this request (the Bans
	// page checking a name is ban-check).
	pick func(page url.Values) *apiTwin
}

// twin is an apiTwin whose query is the page's with the parameters
// renamed that rename names (page name → API name); the others keep their
// names, and must be the operation's (serveTwin refuses any other).
func twin(path string, rename map[string]string, pageOnly ...string) *apiTwin {
	return &apiTwin{path: path, rename: rename, pageOnly: pageOnly}
}

// query maps the page's query to the operation's. A page parameter the
// twin neither renames, reads nor leaves out, and that the operation does
// not take (known: the operation's query parameters), is refused (400)
// by its page name — never silently dropped.
func (t *apiTwin) query(page url.Values, known map[string]bool) (url.Values, error) {
	for name := range page {
		_, renamed := t.rename[name]
		if !renamed && !known[name] && !slices.Contains(t.pageOnly, name) && !slices.Contains(t.own, name) {
			return nil, fmt.Errorf("%w: the parameter %q means nothing to this page's JSON, which is GET %s (its parameters: %s)",
				route.ErrParam, name, t.path, t.takes(known))
		}
	}
	if t.prepare != nil {
		var err error
		if page, err = t.prepare(page); err != nil {
			return nil, err
		}
	}
	out := url.Values{}
	from := map[string]string{} // API name → the page name that gave it
	for _, name := range slices.Sorted(maps.Keys(page)) {
		if slices.Contains(t.pageOnly, name) {
			continue
		}
		api := name
		if to, ok := t.rename[name]; ok {
			api = to
		}
		// ?k=A&key=B: the page reads k, a map order would pick either.
		if other, ok := from[api]; ok {
			return nil, fmt.Errorf("%w: the parameters %q and %q are the same one (%s): give one", route.ErrParam, other, name, api)
		}
		from[api] = name
		out[api] = page[name]
	}
	return out, nil
}

// takes lists the page parameters t takes, for a refusal.
func (t *apiTwin) takes(known map[string]bool) string {
	var names []string
	for api := range known {
		page := api
		for p, to := range t.rename {
			if to == api {
				page = p
			}
		}
		names = append(names, page)
	}
	names = append(names, t.pageOnly...)
	names = append(names, t.own...)
	slices.Sort(names)
	names = slices.Compact(names)
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// apiQueryParams are the query parameters of each GET operation of api,
// by its path (route.API…).
func apiQueryParams(api huma.API) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for path, item := range api.OpenAPI().Paths {
		if item.Get == nil {
			continue
		}
		known := map[string]bool{}
		for _, p := range item.Get.Parameters {
			if p.In == "query" {
				known[p.Name] = true
			}
		}
		out[path] = known
	}
	return out
}

// pageParams are the page's path parameters by the API's names.
var pageParams = map[string]string{"conn": "conn", "db": "n"}

// pageJSON answers a page's JSON request: its twin's answer, or 406
// naming where its data is (noJSON).
func (a *App) pageJSON(e *echo.Echo, r Route, params map[string]map[string]bool) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if !wantsJSON(c.Request()) {
				return next(c)
			}
			c.Response().Header().Add(echo.HeaderVary, echo.HeaderAccept)
			t := r.twin
			if t != nil && t.pick != nil {
				if other := t.pick(c.QueryParams()); other != nil {
					t = other
				}
			}
			if t == nil || c.Request().Method != http.MethodGet {
				detail := "This page answers HTML only. " + r.NoJSON
				if r.NoJSON == "" {
					detail += "Scripts read and act through the API: " + route.APIOpenAPI + " describes it."
				}
				a.writeProblem(c, apiv1.NewProblem(http.StatusNotAcceptable, "", detail))
				return nil
			}
			return a.serveTwin(e, c, t, params[t.path])
		}
	}
}

// serveTwin runs the twin operation's handler (as the router would for
// its path) on the page's request: its identity, its path parameters,
// its query mapped.
func (a *App) serveTwin(e *echo.Echo, c echo.Context, t *apiTwin, known map[string]bool) error {
	q, err := t.query(c.QueryParams(), known)
	if err != nil {
		a.writeProblem(c, err)
		return nil
	}
	vals := map[string]string{}
	for _, name := range c.ParamNames() {
		if to, ok := pageParams[name]; ok {
			vals[to] = c.Param(name)
		}
	}
	// URL.Path holds the path's bytes as they are, RawPath their escaped
	// form: a name with a space or a '%' is escaped once, by the URL.
	path, raw := t.path, t.path
	for name, v := range vals {
		path = strings.ReplaceAll(path, "{"+name+"}", v)
		raw = strings.ReplaceAll(raw, "{"+name+"}", url.PathEscape(v))
	}
	req := c.Request().Clone(c.Request().Context())
	req.URL = &url.URL{Path: path, RawPath: raw, RawQuery: q.Encode()}
	req.RequestURI = req.URL.RequestURI()
	ac := e.NewContext(req, c.Response())
	ac.Set(ctxIdentity, c.Get(ctxIdentity))
	ac.Set(ctxCSRF, c.Get(ctxCSRF))
	// The operation's route, found by its template; its parameters are
	// then the page's values, byte-exact (no escaping round trip).
	e.Router().Find(http.MethodGet, t.path, ac)
	names := ac.ParamNames()
	values := make([]string, len(names))
	for i, n := range names {
		v, ok := vals[n]
		if !ok {
			return fmt.Errorf("page JSON: the page has no parameter %s for %s", n, t.path)
		}
		values[i] = v
	}
	ac.SetParamValues(values...)
	return ac.Handler()(ac)
}
