package handlers

import (
	"encoding/json"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/keydeck/keydeck/redisview/action"
)

// RequireMachine guards an endpoint scripts and scrapers read (/metrics):
// like a page it needs an identity of at least need — a session, a trusted
// proxy's header, a bearer token; everyone in open mode — but an anonymous
// request is answered 401 application/problem+json, never sent to sign in,
// and one below need 403.
func (a *App) RequireMachine(need action.Level) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			id := identity(c)
			switch {
			case !id.Signed():
				c.Response().Header().Set("WWW-Authenticate", `Bearer realm="keydeck"`)
				return machineProblem(c, http.StatusUnauthorized, "Sign in first: send a session cookie or an API token (Authorization: Bearer).")
			case id.Level < need:
				return machineProblem(c, http.StatusForbidden, "Your role ("+id.Level.String()+") may not read this; it needs "+need.String()+".")
			}
			return next(c)
		}
	}
}

// machineProblem answers an RFC 9457 problem detail.
func machineProblem(c echo.Context, status int, detail string) error {
	b, err := json.Marshal(map[string]any{"type": "about:blank", "title": http.StatusText(status), "status": status, "detail": detail})
	if err != nil {
		return err
	}
	return c.Blob(status, "application/problem+json", b)
}
