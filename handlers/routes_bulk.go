package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview/action"
)

// bulkRoutes are the routes of bulk actions on a family's or a pattern's
// keys (issue 22): the counting preview, the job's page, cancel, resume, undo.
func (a *App) bulkRoutes() []Route {
	const noAPI = "Bulk jobs have no API operation (" + route.APIOpenAPI + ") yet: an admin counts a family's or a pattern's keys from its key list (" + route.Keys + "), then confirms, follows, cancels, resumes and undoes the job on its page (" + route.BulkJob + ", live over " + route.Live + ")."
	admin := func(method, path string, h echo.HandlerFunc) Route {
		r := Route{Method: method, Path: path, Level: action.Admin, handler: h, NoJSON: noAPI}
		if method == http.MethodPost {
			r.mw = []echo.MiddlewareFunc{a.writable}
		}
		return r
	}
	const get, post = http.MethodGet, http.MethodPost
	return []Route{
		admin(post, route.BulkCount, a.bulkCount),
		admin(get, route.BulkJob, a.bulkJobPage),
		admin(post, route.BulkStart, a.bulkStart),
		admin(post, route.BulkCancel, a.bulkCancel),
		admin(post, route.BulkResume, a.bulkResume),
		admin(post, route.BulkUndo, a.bulkUndo),
	}
}
