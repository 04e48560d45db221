package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview/action"
)

// transferRoutes are the routes of export (JSON Lines) and import (issue 22).
func (a *App) transferRoutes() []Route {
	return []Route{
		// Any role: a viewer exports what the key page shows it (sensitive
		// values withheld), paced by its share of the scan budget.
		{Method: http.MethodGet, Path: route.Export, Level: action.Viewer, handler: a.exportKeys,
			NoJSON: "The export is JSON Lines already (application/x-ndjson, docs/export-format.md): ask it without Accept: application/json; one key's JSON is GET " + route.APIKey + "."},
		// Import writes: admin, on a writable console; the upload is the one
		// multipart body (limitBody), its CSRF token in the query.
		{Method: http.MethodGet, Path: route.Import, Level: action.Admin, handler: a.importPage, mw: []echo.MiddlewareFunc{a.writable}, NoJSON: importIn},
		{Method: http.MethodPost, Path: route.Import, Level: action.Admin, handler: a.importPreview, mw: []echo.MiddlewareFunc{a.writable}, NoJSON: importIn},
		{Method: http.MethodPost, Path: route.ImportStart, Level: action.Admin, handler: a.importStart, mw: []echo.MiddlewareFunc{a.writable}, NoJSON: importIn},
	}
}

const importIn = "An import is for people, from its page (upload, preview, confirm); the API (" + route.APIOpenAPI + ") has no import operation."
