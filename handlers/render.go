package handlers

import (
	"context"
	"net/http"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/keydeck/keydeck/internal/apiv1"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/views"
)

// render answers with the page t. Its view model (the second argument,
// which t renders) is the page's alone: it is never answered as JSON. A
// JSON request is answered before the page by its API twin (pageJSON);
// one that reaches render all the same is refused (406). A
// page renders into a pooled buffer first, so a failing component never
// leaves a half-written page behind a 200. The page is always valid UTF-8
// (see validUTF8); requestLog warns when it had to be made so.
func render(c echo.Context, status int, _ any, t templ.Component) error {
	c.Response().Header().Add(echo.HeaderVary, echo.HeaderAccept)
	if wantsJSON(c.Request()) {
		return apiv1.NewProblem(http.StatusNotAcceptable, "", "This page answers HTML only; scripts use the API ("+route.APIOpenAPI+").")
	}
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
		p.User, p.Role = id.User, id.Level.String()
	}
	p.CanAudit = id.Signed()
	if !id.Signed() {
		return p // no connection names before sign-in
	}
	for _, conn := range a.conns.All() {
		p.Nav = append(p.Nav, views.NavItem{Name: conn.Name, Href: route.OverviewURL(conn.Name), Active: conn.Name == active})
	}
	if active != "" {
		p.Sections = a.sectionNav(c, active)
	}
	return p
}
