package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview/action"
)

// editRoutes are the routes of editing one key (issue 22): creating a key
// from the database page; every edit itself is an action (POST /actions/preview).
func (a *App) editRoutes() []Route {
	return []Route{{
		Method: http.MethodPost, Path: route.CreateKey, Level: action.Admin, handler: a.createKeyPreview,
		mw:     []echo.MiddlewareFunc{a.writable},
		NoJSON: "A key is created by the action " + action.KindCreateKey + ": POST " + route.APIPreview + " {kind: \"" + action.KindCreateKey + "\", conn, db, key: the new name, args: {type, value, encoding, ttl}}, then POST " + route.APIExecute + " {token}.",
	}}
}
