package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/keydeck/keydeck/internal/live"
	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/views"
	"github.com/keydeck/keydeck/views/format"
)

const auditTopicPrefix = "audit"

// The datetime-local inputs carry no zone; Keydeck reads them as UTC and
// shows times in UTC, so what is typed matches what is listed.
const auditTimeLayout = "2006-01-02T15:04"

// auditFilter reads the filter from the query.
func auditFilter(q url.Values) (action.Filter, error) {
	f := action.Filter{User: strings.TrimSpace(q.Get("user")), Action: q.Get("action"), Key: q.Get("key"), Before: q.Get("before"), Limit: 50}
	for _, t := range []struct {
		name string
		dst  *time.Time
	}{{"since", &f.Since}, {"until", &f.Until}} {
		if v := q.Get(t.name); v != "" {
			ts, err := time.Parse(auditTimeLayout, v)
			if err != nil {
				return f, echo.NewHTTPError(http.StatusBadRequest, fmt.Sprintf("%s: want a date and time like 2026-11-29T14:30", t.name))
			}
			*t.dst = ts
		}
	}
	if !f.Until.IsZero() {
		// "Until 14:30" includes the records of 14:30 itself.
		f.Until = f.Until.Add(time.Minute - time.Millisecond)
	}
	if len(f.User) > 64 || len(f.Key) > 256 || len(f.Action) > 64 {
		return f, echo.NewHTTPError(http.StatusBadRequest, "A filter value is too long.")
	}
	return f, nil
}

// filterQuery is the canonical query of a filter (the live topic's argument).
func filterQuery(f action.Filter) string {
	q := url.Values{}
	set := func(k, v string) {
		if v != "" {
			q.Set(k, v)
		}
	}
	set("user", f.User)
	set("action", f.Action)
	set("key", f.Key)
	if !f.Since.IsZero() {
		q.Set("since", f.Since.Format(auditTimeLayout))
	}
	if !f.Until.IsZero() {
		q.Set("until", f.Until.Truncate(time.Minute).Format(auditTimeLayout))
	}
	return q.Encode()
}

func (a *App) auditPage(c echo.Context) error {
	f, err := auditFilter(c.QueryParams())
	if err != nil {
		return err
	}
	vm := a.auditVM(c.Request().Context(), f, actor(c))
	return render(c, http.StatusOK, views.AuditPage(a.page(c, "Audit log", ""), vm))
}

func (a *App) auditVM(ctx context.Context, f action.Filter, act action.Actor) views.AuditVM {
	vm := views.AuditVM{User: f.User, Action: f.Action, Key: f.Key, CanUndo: a.actions != nil && a.actions.Allowed(act, action.KindUndo) && !a.auth.ReadOnly}
	if !f.Since.IsZero() {
		vm.Since = f.Since.Format(auditTimeLayout)
	}
	if !f.Until.IsZero() {
		vm.Until = f.Until.Truncate(time.Minute).Format(auditTimeLayout)
	}
	if a.actions == nil {
		vm.Err = "no audit log is configured"
		return vm
	}
	for _, k := range a.actions.Kinds() {
		vm.Actions = append(vm.Actions, k.Name())
	}
	// Only the newest page is live; older pages are history. Admins watch
	// the rendering with undo links, everyone else the one without.
	if f.Before == "" {
		vm.WSURL = wsURL(auditTopic(vm.CanUndo, f))
	}
	recs, next, err := a.actions.ReadAudit(ctx, f)
	if err != nil {
		vm.Err = err.Error()
		return vm
	}
	if next != "" {
		q, _ := url.ParseQuery(filterQuery(f))
		q.Set("before", next)
		vm.Next = "/audit?" + q.Encode()
	}
	for _, r := range recs {
		vm.Rows = append(vm.Rows, views.AuditRow{
			ID: r.ID, Time: format.Time(r.Time), Phase: r.Phase, User: r.User, Role: r.Role,
			Action: r.Action, Where: fmt.Sprintf("%s · db%d", r.Conn, r.DB), Keys: r.Keys, Summary: r.Summary,
			Outcome: r.Outcome, Error: r.Error, UndoneBy: r.UndoneBy, Undoable: r.Undoable(), Conn: r.Conn, DB: r.DB,
			Targets: priorTargets(r),
		})
	}
	return vm
}

// auditTopic is "audit:undo:<filter>" (admins) or "audit:plain:<filter>".
func auditTopic(undo bool, f action.Filter) string {
	mode := "plain"
	if undo {
		mode = "undo"
	}
	return auditTopicPrefix + ":" + mode + ":" + filterQuery(f)
}

// auditSource resolves "audit:MODE:<filter query>"; viewers of the same
// filter and mode share one poller. The websocket handler lets only admins
// subscribe to the undo mode.
func (a *App) auditSource(arg string) (func() live.Source, action.Role, error) {
	mode, arg, _ := strings.Cut(arg, ":")
	if mode != "undo" && mode != "plain" {
		return nil, 0, fmt.Errorf("%w %q", errUnknownTopic, "audit:"+mode)
	}
	q, err := url.ParseQuery(arg)
	if err != nil {
		return nil, 0, fmt.Errorf("%w %q", errUnknownTopic, "audit:"+arg)
	}
	f, err := auditFilter(q)
	if err != nil {
		return nil, 0, fmt.Errorf("%w %q", errUnknownTopic, "audit:"+arg)
	}
	role := action.Viewer
	if mode == "undo" {
		role = action.Admin
	}
	return func() live.Source {
		return live.SourceFunc(func(ctx context.Context) ([]byte, error) {
			vm := a.auditVM(ctx, f, action.Actor{Role: role})
			return renderBytes(ctx, views.AuditLive(vm, true))
		})
	}, role, nil
}

// undoPreview is the confirmation step of an undo, opened from the audit log.
func (a *App) undoPreview(c echo.Context) error {
	db, err := strconv.Atoi(c.QueryParam("db"))
	if err != nil || db < 0 || db >= maxDB {
		return echo.NewHTTPError(http.StatusBadRequest, "db: want a database index.")
	}
	req := action.Request{Conn: c.QueryParam("conn"), DB: db, Args: map[string]string{action.ArgRecord: c.QueryParam("record")}}
	return a.preview(c, action.KindUndo, req, "/audit")
}
