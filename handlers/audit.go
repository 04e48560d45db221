package handlers

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/keydeck/keydeck/internal/live"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/views"
	"github.com/keydeck/keydeck/views/format"
)

// AuditLog is what the audit page needs of the audit stream
// (action.Runner): a page of records, newest first, and the id before which
// the next page starts ("" at the end).
type AuditLog interface {
	ReadAudit(ctx context.Context, f action.Filter) ([]action.Record, string, error)
	// AuditRecord reads one record by its id (action.ErrNotFound when the
	// capped log no longer holds it).
	AuditRecord(ctx context.Context, id string) (action.Record, error)
}

// auditFilter is the action log's filter of the page's: 50 records, and
// "until 14:30" includes the records of 14:30 itself.
func auditFilter(f route.AuditFilter) action.Filter {
	af := action.Filter{User: f.User, Action: f.Action, Key: f.Key, Since: f.Since, Before: f.Before, Limit: 50}
	if !f.Until.IsZero() {
		af.Until = f.Until.Add(time.Minute - time.Millisecond)
	}
	return af
}

func (a *App) auditPage(c echo.Context) error {
	f, err := route.ParseAuditFilter(c.QueryParams())
	if err != nil {
		return err
	}
	vm := a.auditVM(c.Request().Context(), f, actor(c))
	return render(c, http.StatusOK, vm, views.AuditPage(a.page(c, "Audit log", ""), vm))
}

func (a *App) auditVM(ctx context.Context, f route.AuditFilter, act action.Actor) views.AuditVM {
	vm := views.AuditVM{User: f.User, Action: f.Action, Key: f.Key, CanUndo: a.actions != nil && a.actions.Allowed(act, action.KindUndo) && !a.auth.ReadOnly}
	if !f.Since.IsZero() {
		vm.Since = f.Since.Format(route.AuditTimeLayout)
	}
	if !f.Until.IsZero() {
		vm.Until = f.Until.Format(route.AuditTimeLayout)
	}
	if a.audit == nil {
		vm.Err = "no audit log is configured"
		return vm
	}
	if a.actions != nil {
		for _, k := range a.actions.Kinds() {
			vm.Actions = append(vm.Actions, k.Name())
		}
	}
	// Only the newest page is live; older pages are history. Admins watch
	// the rendering with undo links, everyone else the one without.
	if f.Before == "" {
		vm.WSURL = route.LiveURL(AuditTopic{Filter: f, Undo: vm.CanUndo}.String())
	}
	recs, next, err := a.audit.ReadAudit(ctx, auditFilter(f))
	if err != nil {
		vm.Err = err.Error()
		return vm
	}
	if next != "" {
		older := f
		older.Before = next
		vm.Next = older.URL()
	}
	for _, r := range recs {
		vm.Rows = append(vm.Rows, auditRow(r))
	}
	return vm
}

// auditRow is one record as the log and the record's own page show it.
func auditRow(r action.Record) views.AuditRow {
	where := fmt.Sprintf("%s · db%d", r.Conn, r.DB)
	if r.Server != nil {
		where = r.Conn + " · " + serverWhere(r.Server.Node) // an action on a server, not on a database
	}
	if r.Own() {
		where = "Keydeck's own records (audit Redis)" // a write of its own (a token store's): no connection
	}
	row := views.AuditRow{
		ID: r.ID, Time: format.Time(r.Time), Phase: r.Phase, User: r.User, Role: r.Level,
		Action: r.Action, Where: where, Keys: r.Keys, Summary: r.Summary,
		Outcome: r.Outcome, Error: r.Error, UndoneBy: r.UndoneBy, Undoable: r.Undoable(), Conn: r.Conn, DB: r.DB,
		Targets: priorTargets(r), Href: route.AuditRecordURL(r.ID),
	}
	bulkAuditRow(&row, r)
	return row
}

const auditKind = "audit"

// AuditTopic is the newest page of the audit log under one filter:
// "audit:undo:<filter>" (with undo links, for admins) or
// "audit:plain:<filter>". Viewers of the same filter and mode share one
// poller.
type AuditTopic struct {
	Filter route.AuditFilter
	Undo   bool
}

func (t AuditTopic) String() string {
	mode := "plain"
	if t.Undo {
		mode = "undo"
	}
	return auditKind + ":" + modeArg(mode, t.Filter.Values())
}

func (t AuditTopic) Level() action.Level {
	if t.Undo {
		return action.Admin
	}
	return action.Viewer
}

func parseAuditTopic(arg string) (Topic, error) {
	mode, q, err := parseModeArg(arg, "plain", "undo")
	if err != nil {
		return nil, err
	}
	f, err := route.ParseAuditFilter(q)
	if err != nil || f.Before != "" { // only the newest page is live
		return nil, ErrUnknownTopic
	}
	return AuditTopic{Filter: f, Undo: mode == "undo"}, nil
}

func (t AuditTopic) source(a *App) (func() live.Source, error) {
	return func() live.Source {
		return live.SourceFunc(func(ctx context.Context) ([]byte, error) {
			vm := a.auditVM(ctx, t.Filter, action.Actor{Level: t.Level()})
			return renderBytes(ctx, views.AuditLive(vm, true))
		})
	}, nil
}

// undoPreview is the confirmation step of an undo, opened from the audit log.
func (a *App) undoPreview(c echo.Context) error {
	u, err := route.ParseUndo(c.QueryParams())
	if err != nil {
		return err
	}
	req := action.Request{Conn: u.Conn, DB: u.DB, Args: map[string]string{action.ArgRecord: u.Record}}
	return a.preview(c, action.KindUndo, req, route.Audit)
}
