package handlers

import (
	"net/http"

	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview/action"
)

// transferRoutes are the routes of export (JSON Lines) and import (issue 22).
func (a *App) transferRoutes() []Route {
	return []Route{
		// Any role: a viewer exports what the key page shows it (sensitive
		// values withheld), paced by its share of the scan budget.
		{Method: http.MethodGet, Path: route.Export, Level: action.Viewer, handler: a.exportKeys,
			NoJSON: "The export is JSON Lines already (application/x-ndjson, docs/export-format.md); ask it without Accept: application/json."},
	}
}
