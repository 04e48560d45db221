package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humaecho"
	"github.com/labstack/echo/v4"

	"github.com/keydeck/keydeck/internal/apiv1"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview/action"
)

// The JSON API (/api/v1) is registered with huma on the console's echo
// router: every request passes the same middleware as the pages
// (identity, CSRF for a session-cookie write, body limit), and each
// operation is guarded by the level it needs with the pages' own check
// (requireLevel, writable). The OpenAPI 3.1 document is produced from the
// operations' Go types (internal/apiv1).

func init() {
	// Every error huma itself answers (a malformed parameter or body) is a
	// problem too, with the pages' status for a bad request: 400, not 422.
	huma.NewError = func(status int, msg string, errs ...error) huma.StatusError {
		if status == http.StatusUnprocessableEntity {
			status = http.StatusBadRequest
		}
		detail := []string{msg}
		for _, e := range errs {
			if e != nil {
				detail = append(detail, e.Error())
			}
		}
		return apiv1.NewProblem(status, "", strings.Join(detail, "; "))
	}
}

// apiOp is one operation of the API: huma's description of it and the
// level it needs; write operations also need a console that acts.
type apiOp struct {
	op    huma.Operation
	level action.Level
	write bool
}

// apiConfig is the API's huma configuration: OpenAPI 3.1, no built-in
// docs, schema or spec routes (the console serves the spec itself, at
// route.APIOpenAPI), no $schema links in bodies.
func apiConfig() huma.Config {
	cfg := huma.DefaultConfig("Keydeck API", "1")
	cfg.Info.Description = "Keydeck's JSON API: what the console's pages show and do, as a contract. Conventions: docs/api.md."
	cfg.OpenAPIPath, cfg.DocsPath, cfg.SchemasPath = "", "", ""
	cfg.CreateHooks = nil
	cfg.Components.SecuritySchemes = map[string]*huma.SecurityScheme{
		"bearer":  {Type: "http", Scheme: "bearer", Description: "An API token (kdt_…) from /account/tokens."},
		"session": {Type: "apiKey", In: "cookie", Name: sessionCookie, Description: "A signed-in browser's session; a write also needs the X-CSRF-Token header."},
	}
	cfg.Security = []map[string][]string{{"bearer": {}}, {"session": {}}}
	return cfg
}

// NewAPI registers the API's operations on e and returns it (its
// OpenAPI() is the contract).
func (a *App) NewAPI(e *echo.Echo) huma.API {
	api := humaecho.New(e, apiConfig())
	for _, r := range a.apiRoutes() {
		r.register(api, a.apiGuard(r.level, r.write))
	}
	// huma documents a 422 for operations with parameters; this API
	// answers a bad request 400, as the pages do.
	for _, item := range api.OpenAPI().Paths {
		for _, op := range []*huma.Operation{item.Get, item.Post} {
			if op != nil {
				delete(op.Responses, "422")
			}
		}
	}
	e.GET(route.APIOpenAPI, func(c echo.Context) error {
		b, err := json.Marshal(api.OpenAPI())
		if err != nil {
			return err
		}
		return c.Blob(http.StatusOK, "application/openapi+json", b)
	})
	return api
}

// apiRoute is one operation to register: its level, and a function that
// registers it (huma.Register is generic in the input and output types).
type apiRoute struct {
	level    action.Level
	write    bool
	register func(api huma.API, guard func(huma.Context, func(huma.Context)))
}

// apiRouteOf makes an apiRoute of a handler: the operation's method, path
// (internal/route), id, summary and the errors it may answer besides 401
// and 403. The handler's errors are answered as the pages' error table
// says (problem).
func apiRouteOf[I, O any](a *App, method, path, id, summary string, level action.Level, errs []int, h func(context.Context, echo.Context, *I) (*O, error)) apiRoute {
	return apiRoute{level: level, register: func(api huma.API, guard func(huma.Context, func(huma.Context))) {
		op := huma.Operation{OperationID: id, Method: method, Path: path, Summary: summary,
			Errors: append([]int{http.StatusUnauthorized, http.StatusForbidden}, errs...), Middlewares: huma.Middlewares{guard}}
		if path == route.APIPreview || path == route.APIExecute {
			op.MaxBodyBytes = maxActionBody // an edit's value; limitBody keeps others to maxBody
		}
		huma.Register(api, op, func(ctx context.Context, in *I) (*O, error) {
			c, _ := ctx.Value(ctxEcho{}).(echo.Context)
			out, err := h(ctx, c, in)
			if err != nil {
				return nil, a.problem(c, err)
			}
			return out, nil
		})
	}}
}

// ctxEcho keys the request's echo context in its huma context.
type ctxEcho struct{}

// apiGuard refuses a request below level with the pages' own check: 401
// anonymous, 403 a role too low (or, for a write, a console that does not
// act), as problem details.
func (a *App) apiGuard(level action.Level, write bool) func(huma.Context, func(huma.Context)) {
	pass := func(echo.Context) error { return nil }
	check := a.requireLevel(level)(pass)
	if write {
		check = a.requireLevel(level)(a.writable(pass))
	}
	return func(ctx huma.Context, next func(huma.Context)) {
		c := humaecho.Unwrap(ctx)
		if err := check(c); err != nil {
			a.writeProblem(c, err)
			return
		}
		if c.Response().Committed {
			// The check answered itself (a redirect): the operation must
			// not run and write after it.
			return
		}
		next(huma.WithValue(ctx, ctxEcho{}, c))
	}
}

// problem is err as the API answers it: the status, title and detail
// the pages' error table (errorVM) gives it. A server error is logged.
func (a *App) problem(c echo.Context, err error) *apiv1.Problem {
	var p *apiv1.Problem
	if errors.As(err, &p) {
		return p
	}
	vm := errorVM(err)
	a.logFailure(c, vm.Code, err)
	return apiv1.NewProblem(vm.Code, vm.Title, vm.Detail)
}

// writeProblem answers err as a problem detail.
func (a *App) writeProblem(c echo.Context, err error) {
	p := a.problem(c, err)
	b, _ := json.Marshal(p)
	c.Response().Header().Set(echo.HeaderContentType, "application/problem+json")
	if p.Status == http.StatusUnauthorized {
		c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="keydeck"`)
	}
	c.Response().WriteHeader(p.Status)
	if c.Request().Method != http.MethodHead {
		_, _ = c.Response().Write(b)
	}
}
