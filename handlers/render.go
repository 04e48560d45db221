package handlers

import (
	"context"
	"errors"
	"net/http"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/views"
)

// render renders into a pooled buffer first, so a failing component never
// leaves a half-written page behind a 200. The page is always valid UTF-8
// (see validUTF8); requestLog warns when it had to be made so.
func render(c echo.Context, status int, t templ.Component) error {
	buf := templ.GetBuffer()
	defer templ.ReleaseBuffer(buf)
	if err := t.Render(c.Request().Context(), buf); err != nil {
		return err
	}
	page, fixed := validUTF8(buf.Bytes())
	if fixed {
		c.Set(ctxEscapedUTF8, true)
	}
	return c.HTMLBlob(status, page)
}

// ctxEscapedUTF8 marks a response whose bytes render had to escape.
const ctxEscapedUTF8 = "kd.escaped-utf8"

// renderBytes renders a component for the websocket.
func renderBytes(ctx context.Context, t templ.Component) ([]byte, error) {
	buf := templ.GetBuffer()
	defer templ.ReleaseBuffer(buf)
	if err := t.Render(ctx, buf); err != nil {
		return nil, err
	}
	return append([]byte(nil), buf.Bytes()...), nil
}

// errorHandler is the one place errors become responses.
func (a *App) errorHandler(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	code, title, detail := http.StatusInternalServerError, "Something went wrong", "The error has been logged."
	var he *echo.HTTPError
	switch {
	case errors.Is(err, redisview.ErrUnknownConnection):
		code, title, detail = http.StatusNotFound, "No such connection", "Keydeck has no Redis connection of that name."
	case errors.As(err, &he):
		code = he.Code
		switch code {
		case http.StatusNotFound:
			title, detail = "Page not found", "There is nothing at this address."
			if m, ok := he.Message.(string); ok && m != http.StatusText(code) {
				detail = m
			}
		case http.StatusMethodNotAllowed:
			title, detail = "Method not allowed", ""
		default:
			title = http.StatusText(code)
			if m, ok := he.Message.(string); ok {
				detail = m
			} else {
				detail = ""
			}
		}
	}
	if code >= 500 {
		a.log.Error("request failed", "method", c.Request().Method, "path", c.Request().URL.Path, "err", err)
	}
	if c.Request().Method == http.MethodHead {
		_ = c.NoContent(code)
		return
	}
	if err := render(c, code, views.ErrorPage(a.page(c, title, ""), code, title, detail)); err != nil {
		a.log.Error("render error page", "err", err)
	}
}

// page builds the layout model.
func (a *App) page(c echo.Context, title, active string) views.Page {
	id := identity(c)
	csrf, _ := c.Get(ctxCSRF).(string)
	p := views.Page{
		Title: title, Demo: a.demo, Active: active, CSRF: csrf,
		OpenAccess: a.auth.Open, ReadOnly: a.auth.ReadOnly,
		SignedIn: id.Via == "session",
	}
	if id.Signed() && id.Via != "open" {
		p.User, p.Role = id.User, id.Role.String()
	}
	p.CanAudit = id.Signed()
	if !id.Signed() {
		return p // no connection names before sign-in
	}
	for _, conn := range a.conns.All() {
		p.Nav = append(p.Nav, views.NavItem{Name: conn.Name, Href: "/c/" + conn.Name, Active: conn.Name == active})
	}
	return p
}
