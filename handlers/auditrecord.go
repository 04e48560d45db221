package handlers

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/views"
)

// auditRecordRoutes: a record's own page, read by any role. The API has
// no operation for one record: its JSON is the log's page of records.
func (a *App) auditRecordRoutes() []Route {
	return []Route{{Method: http.MethodGet, Path: route.AuditRecord, Level: action.Viewer, handler: a.auditRecordPage,
		NoJSON: "A record is in the audit log's pages of records: GET " + route.APIAudit + " (newest first; ?before= an older page)."}}
}

// auditRecordPage is one audit record's own page. A confirmed action
// redirects here (POST, then 303, then GET), so a reload shows the record
// again instead of sending the confirmation twice, and the address is one
// to share in a ticket.
func (a *App) auditRecordPage(c echo.Context) error {
	id, err := route.ParseAuditRecordID(c.Param("id"))
	if err != nil {
		return err
	}
	if a.audit == nil {
		return echo.NewHTTPError(http.StatusNotFound, "No audit log is configured, so there are no records to show.")
	}
	ctx := c.Request().Context()
	rec, err := a.audit.AuditRecord(ctx, id)
	if errors.Is(err, action.ErrAuditUnavailable) {
		// Not the action's "nothing was changed": this is a read.
		return withBack(echo.NewHTTPError(http.StatusServiceUnavailable, "The audit log cannot be read now: "+err.Error()), route.Audit)
	}
	if err != nil {
		return withBack(err, route.Audit)
	}
	vm := auditRecordVM(rec, a.actions != nil && a.actions.Allowed(actor(c), action.KindUndo) && !a.auth.ReadOnly)
	if rec.Phase == action.PhaseOutcome && rec.Ref != "" {
		// The intent holds what the keys were before: what an undo
		// writes back, and what a reader of the ticket wants to see.
		if in, err := a.audit.AuditRecord(ctx, rec.Ref); err == nil {
			row := auditRow(in)
			vm.Intent = &row
		} else {
			vm.IntentErr = err.Error()
		}
	}
	return render(c, http.StatusOK, vm, views.AuditRecordPage(a.page(c, "Audit record "+id, rec.Conn), vm))
}

// auditRecordVM says what happened in words first (done, refused,
// failed), then the record as the log shows it.
func auditRecordVM(rec action.Record, canUndo bool) views.AuditRecordVM {
	vm := views.AuditRecordVM{Row: auditRow(rec), CanUndo: canUndo, Back: recordBack(rec)}
	switch {
	case rec.Phase != action.PhaseOutcome:
		vm.Title = "Started: " + rec.Summary
		vm.Message = "This is the record written before the change. Its outcome is a later record of the audit log."
	case rec.Outcome == action.OutcomeOK:
		vm.OK, vm.Title = true, "Done: "+rec.Summary
	case rec.Outcome == action.OutcomeRefused:
		vm.Title, vm.Message = "Refused, nothing changed: "+rec.Summary, rec.Error
	case rec.Outcome == action.OutcomeUnknown:
		vm.Title, vm.Message = "Not known whether it ran: "+rec.Summary, rec.Error
	default:
		vm.Title, vm.Message = "Failed: "+rec.Summary, rec.Error
	}
	if rec.Summary == "" {
		vm.Title = rec.Action + " (" + vm.Row.Phase + ")"
	}
	return vm
}

// recordBack is the page the recorded action was started from: the key
// it acted on, the server page of a setting or client, a bulk job's page;
// the audit log for the rest (an undo, Keydeck's own writes).
func recordBack(rec action.Record) string {
	if rec.Own() {
		return route.Audit
	}
	if row := auditRow(rec); row.UndoURL != "" {
		return row.UndoURL // a bulk job's page
	}
	if b := serverBack(rec.Action, action.Request{Conn: rec.Conn, DB: rec.DB, Args: rec.Args}); b != "" {
		return b
	}
	if len(rec.Keys) == 1 && rec.Action != action.KindUndo {
		if href := keyHref(rec.Conn, rec.DB, rec.Keys[0]); href != "" {
			return href
		}
	}
	return route.Audit
}
