package handlers

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

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
	// query maps the page's query to the operation's; a page parameter it
	// does not know is refused (400), never silently dropped.
	query func(page url.Values) (url.Values, error)
	// pick, when set, may choose another twin for this request (the Bans
	// page checking a name is ban-check).
	pick func(page url.Values) *apiTwin
}

// twin is an apiTwin whose query is the page's with the parameters
// renamed that rename names (page name → API name); the others keep their
// names (the operation takes them, or ignores them as it ignores them
// from any client).
func twin(path string, rename map[string]string) *apiTwin {
	return &apiTwin{path: path, query: func(page url.Values) (url.Values, error) {
		out := url.Values{}
		for name, vals := range page {
			if to, ok := rename[name]; ok {
				name = to
			}
			out[name] = append(out[name], vals...)
		}
		return out, nil
	}}
}

// pageParams are the page's path parameters by the API's names.
var pageParams = map[string]string{"conn": "conn", "db": "n"}

// pageJSON answers a page's JSON request: its twin's answer, or 406
// naming where its data is (noJSON).
func (a *App) pageJSON(e *echo.Echo, r Route) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if !wantsJSON(c.Request()) {
				return next(c)
			}
			c.Response().Header().Add(echo.HeaderVary, echo.HeaderAccept)
			if r.LegacyJSON {
				c.Set(ctxLegacyJSON, true)
				return next(c)
			}
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
			return a.serveTwin(e, c, t)
		}
	}
}

// serveTwin runs the twin operation's handler (as the router would for
// its path) on the page's request: its identity, its path parameters,
// its query mapped.
func (a *App) serveTwin(e *echo.Echo, c echo.Context, t *apiTwin) error {
	q, err := t.query(c.QueryParams())
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
	path := t.path
	for name, v := range vals {
		path = strings.ReplaceAll(path, "{"+name+"}", url.PathEscape(v))
	}
	req := c.Request().Clone(c.Request().Context())
	req.URL = &url.URL{Path: path, RawQuery: q.Encode()}
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
