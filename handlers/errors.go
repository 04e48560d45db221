package handlers

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/redisview/bulk"
	"github.com/keydeck/keydeck/redisview/leaderboard"
	"github.com/keydeck/keydeck/views"
)

// errorStatuses maps the sentinel errors of every layer to the status and
// title of the page that reports them — the one place they are mapped.
// The first entry the error matches (errors.Is) wins; its detail is the
// error's own message, written for the person who clicked, unless the entry
// gives one.
var errorStatuses = []struct {
	err           error
	code          int
	title, detail string
}{
	{route.ErrNoPage, http.StatusNotFound, "Page not found", ""},
	{route.ErrParam, http.StatusBadRequest, "Bad request", ""},
	{redisview.ErrUnknownConnection, http.StatusNotFound, "No such connection", "Keydeck has no Redis connection of that name."},
	{redisview.ErrNoDatabase, http.StatusNotFound, "No such database", ""},
	{redisview.ErrUnknownNode, http.StatusNotFound, "No such server", ""},
	{ErrNoKey, http.StatusNotFound, "No such key", ""},
	{ErrUnknownTopic, http.StatusNotFound, "No such live view", ""},
	{leaderboard.ErrSensitive, http.StatusForbidden, "Sensitive values are never shown", ""},
	{action.ErrForbidden, http.StatusForbidden, "Not allowed", ""},
	{action.ErrServerChanged, http.StatusConflict, "The server changed since you previewed it", ""},
	{action.ErrChanged, http.StatusConflict, "The key changed since you previewed it", ""},
	{action.ErrNotFound, http.StatusNotFound, "Not found", ""},
	{action.ErrAuditUnavailable, http.StatusServiceUnavailable, "The audit log is unavailable, so nothing was changed", ""},
	{action.ErrCrossSlot, http.StatusBadRequest, "Keys in more than one cluster slot", ""},
	{action.ErrInvalid, http.StatusBadRequest, "Invalid request", ""},
	{bulk.ErrState, http.StatusConflict, "The bulk job cannot do that now", ""},
	{action.ErrNotUndoable, http.StatusConflict, "Cannot undo", ""},
	{action.ErrOutcomeUnknown, http.StatusGatewayTimeout, "Sent, but its reply was lost: it may have run", ""},
	{action.ErrRedis, http.StatusBadGateway, "Redis refused or could not be reached", ""},
	{redisview.ErrBadCursor, http.StatusBadRequest, "Bad position", ""},
	{redisview.ErrRead, http.StatusBadGateway, "Redis could not be read", ""},
}

// backTo is an error whose page links back to where the person came from.
type backTo struct {
	err  error
	href string
}

func (e backTo) Error() string { return e.err.Error() }
func (e backTo) Unwrap() error { return e.err }

// withBack makes err's page link back to href (a refused action's key page).
func withBack(err error, href string) error {
	if err == nil {
		return nil
	}
	return backTo{err, href}
}

// errorVM says what err means to the person who met it.
func errorVM(err error) views.ErrorVM {
	vm := views.ErrorVM{Code: http.StatusInternalServerError, Title: "Something went wrong", Detail: "The error has been logged."}
	var he *echo.HTTPError
	matched := false
	for _, s := range errorStatuses {
		if errors.Is(err, s.err) {
			vm.Code, vm.Title, vm.Detail = s.code, s.title, s.detail
			if vm.Detail == "" {
				vm.Detail = err.Error()
			}
			matched = true
			break
		}
	}
	if !matched && errors.As(err, &he) {
		vm.Code = he.Code
		msg, _ := he.Message.(string)
		switch vm.Code {
		case http.StatusNotFound:
			vm.Title, vm.Detail = "Page not found", "There is nothing at this address."
			if msg != "" && msg != http.StatusText(vm.Code) {
				vm.Detail = msg
			}
		case http.StatusMethodNotAllowed:
			vm.Title, vm.Detail = "Method not allowed", ""
		default:
			vm.Title, vm.Detail = http.StatusText(vm.Code), msg
		}
	}
	var b backTo
	if errors.As(err, &b) {
		vm.Back = b.href
	}
	return vm
}

// errorHandler is the one place errors become responses.
func (a *App) errorHandler(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	req := c.Request()
	if route.IsAPI(req.URL.Path) || wantsJSON(req) {
		a.writeProblem(c, err)
		return
	}
	vm := errorVM(err)
	a.logFailure(c, vm.Code, err)
	if req.Method == http.MethodHead {
		_ = c.NoContent(vm.Code)
		return
	}
	if err := render(c, vm.Code, vm, views.ErrorPage(a.page(c, vm.Title, ""), vm)); err != nil {
		a.log.Error("render error page", "err", err)
	}
}

// logFailure logs a server error (5xx) answered to c's request.
func (a *App) logFailure(c echo.Context, code int, err error) {
	req := c.Request()
	switch {
	case code == http.StatusInternalServerError:
		a.log.Error("request failed", "method", req.Method, "path", req.URL.Path, "err", err)
	case code >= 500:
		a.log.Warn("request failed", "method", req.Method, "path", req.URL.Path, "status", code, "err", err)
	}
}
