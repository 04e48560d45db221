package handlers

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/redisview/bulk"
	"github.com/keydeck/keydeck/views"
	"github.com/keydeck/keydeck/views/format"
)

// Bulk runs bulk jobs (redisview/bulk.Engine).
type Bulk interface {
	Count(ctx context.Context, actor action.Actor, conn *redisview.Conn, spec bulk.Spec, budget bulk.Budget) (bulk.Job, error)
	// Prepare makes a job of given items (an import, redisview/transfer).
	Prepare(ctx context.Context, actor action.Actor, conn *redisview.Conn, spec bulk.Spec, items []bulk.Item) (bulk.Job, error)
	Start(ctx context.Context, actor action.Actor, id string, typed int64) (bulk.Job, error)
	Cancel(ctx context.Context, actor action.Actor, id string) error
	Resume(ctx context.Context, actor action.Actor, id string) (bulk.Job, error)
	Undo(ctx context.Context, actor action.Actor, id string) (bulk.Job, error)
	Job(ctx context.Context, id string) (bulk.Job, error)
	Skips(ctx context.Context, id string, n int64) ([]bulk.Skip, int64, error)
	Options() bulk.Options
}

// mayBulk: the viewer may start bulk jobs (an admin, on a console that
// writes).
func (a *App) mayBulk(c echo.Context) bool {
	return a.bulk != nil && a.actions != nil && a.actions.Allowed(actor(c), action.KindDeleteKey) && actor(c).Level.Allows(action.Admin)
}

// bulkForms are a key list's bulk forms, for those who may use them.
func (a *App) bulkForms(c echo.Context, l keyList) *views.BulkFormsVM {
	if !a.mayBulk(c) || l.IsPrefix {
		return nil
	}
	csrf, _ := c.Get(ctxCSRF).(string)
	return &views.BulkFormsVM{Action: route.BulkCountURL(l.Conn, l.DB), CSRF: csrf, Family: l.Family, Pattern: l.Pattern,
		Rate: rateText(a.bulk.Options())}
}

func rateText(o bulk.Options) string {
	return fmt.Sprintf("Jobs read and act on at most %s keys a second per connection, shared between the admins running them, in batches of %d. "+
		"The budget is each Keydeck process's own: behind a load balancer, every replica has as much.",
		format.Count(int64(o.Rate)), o.Batch)
}

// bulkCount counts a key list's keys for a bulk job: the job's page then
// shows the count live.
func (a *App) bulkCount(c echo.Context) error {
	conn, db, err := a.connDB(c)
	if err != nil {
		return err
	}
	if a.bulk == nil {
		return fmt.Errorf("%w: bulk actions are not available on this console", action.ErrForbidden)
	}
	spec := bulk.Spec{Kind: c.FormValue("kind"), Sel: bulk.Selection{DB: db, Family: c.FormValue("family"), Pattern: c.FormValue("pattern")}}
	back := route.FamilyKeysURL(conn.Name, db, spec.Sel.Family)
	if spec.Sel.Pattern != "" {
		back = route.PatternKeysURL(conn.Name, db, spec.Sel.Pattern)
	}
	switch spec.Kind {
	case bulk.KindDelete, bulk.KindPersist:
	case bulk.KindExpire:
		d, persist, err := action.ParseTTL(c.FormValue("ttl"))
		if err != nil {
			return withBack(err, back)
		}
		if persist {
			spec.Kind = bulk.KindPersist
		}
		spec.TTL = d
	default:
		return withBack(fmt.Errorf("%w: kind: want delete, expire or persist", route.ErrParam), back)
	}
	j, err := a.bulk.Count(c.Request().Context(), actor(c), conn, spec, a.scanTap(conn.Name, identity(c).Holder()))
	if err != nil {
		return withBack(err, back)
	}
	return c.Redirect(http.StatusSeeOther, route.BulkJobURL(conn.Name, j.ID))
}

// bulkJobOf reads the job of the request's :id on its :conn.
func (a *App) bulkJobOf(c echo.Context) (bulk.Job, error) {
	if a.bulk == nil {
		return bulk.Job{}, route.ErrNoPage
	}
	j, err := a.bulk.Job(c.Request().Context(), c.Param("id"))
	if err != nil {
		return bulk.Job{}, err
	}
	if j.Spec.Sel.Conn != c.Param("conn") {
		return bulk.Job{}, bulk.ErrNotFound
	}
	return j, nil
}

// bulkJobPage shows a job: its count (live while counting), the
// confirmation, its progress (live while running), its controls.
func (a *App) bulkJobPage(c echo.Context) error {
	j, err := a.bulkJobOf(c)
	if err != nil {
		return err
	}
	vm := bulkJobVM(j, a.bulk.Options())
	vm.CSRF, _ = c.Get(ctxCSRF).(string)
	if a.mayBulk(c) {
		bulkControls(&vm, j)
	}
	skips, total, err := a.bulk.Skips(c.Request().Context(), j.ID, 50)
	if err == nil {
		for _, s := range skips {
			vm.Skips = append(vm.Skips, views.BulkSkipRow{Key: s.Key, Reason: s.Reason})
		}
		if total > int64(len(skips)) {
			vm.SkipsMore = fmt.Sprintf("%s more skipped keys not shown.", format.Count(total-int64(len(skips))))
		}
	}
	return render(c, http.StatusOK, vm, views.BulkJobPage(a.page(c, "Bulk job · "+j.Title, j.Spec.Sel.Conn), vm))
}

func bulkJobVM(j bulk.Job, o bulk.Options) views.BulkJobVM {
	sel := j.Spec.Sel
	vm := views.BulkJobVM{Conn: sel.Conn, ID: j.ID, Title: bulkTitle(j),
		WSURL: route.LiveURL(BulkTopic{Conn: sel.Conn, ID: j.ID, As: string(j.Status)}.String()),
		Live:  bulkLiveVM(j, o, string(j.Status)), CountText: format.Count(j.Count),
		AuditURL: route.Audit}
	switch {
	case sel.Family != "":
		vm.Selection = "Every key of family " + sel.Family + " in db" + strconv.Itoa(sel.DB) + " that the count found, as it found it."
		vm.Back = route.FamilyKeysURL(sel.Conn, sel.DB, sel.Family)
	case sel.Pattern != "" && j.Spec.Kind != bulk.KindUndo:
		p, _ := views.ShortName(sel.Pattern)
		vm.Selection = "Every key of db" + strconv.Itoa(sel.DB) + " matching “" + p + "” that the count found, as it found it."
		vm.Back = route.PatternKeysURL(sel.Conn, sel.DB, sel.Pattern)
	}
	if j.Spec.Kind == bulk.KindUndo {
		vm.Selection = "Every key job " + j.Spec.Undoes + " acted on, back to its prior state (value and expiry), where it is still as that job left it."
		vm.Undoes = route.BulkJobURL(sel.Conn, j.Spec.Undoes)
	}
	if j.UndoneBy != "" {
		vm.UndoneBy = route.BulkJobURL(sel.Conn, j.UndoneBy)
	}
	return vm
}

func bulkTitle(j bulk.Job) string {
	sel := j.Spec.Sel
	what := "every key"
	switch {
	case j.Spec.Kind == bulk.KindUndo:
		what = "the keys of bulk job " + j.Spec.Undoes
	case sel.Family != "":
		what += " of family " + sel.Family
	case sel.Pattern != "":
		p, _ := views.ShortName(sel.Pattern)
		what += " matching “" + p + "”"
	case sel.Label != "":
		what = "the keys of " + sel.Label
	}
	t := j.Title + " " + what + " in db" + strconv.Itoa(sel.DB)
	if j.Spec.TTL > 0 {
		t += " (TTL " + format.Duration(j.Spec.TTL) + ")"
	}
	return t
}

// bulkControls offers what the job's state allows.
func bulkControls(vm *views.BulkJobVM, j bulk.Job) {
	conn := j.Spec.Sel.Conn
	switch j.Status {
	case bulk.Counted:
		if j.Count > 0 { // nothing to confirm otherwise
			vm.StartURL, vm.NeedTyped = route.BulkStartURL(conn, j.ID), j.NeedsTypedCount()
		}
		vm.CancelURL = route.BulkCancelURL(conn, j.ID)
	case bulk.Counting, bulk.Running:
		vm.CancelURL = route.BulkCancelURL(conn, j.ID)
	case bulk.Cancelled, bulk.Failed:
		if j.Intent != "" {
			vm.ResumeURL = route.BulkResumeURL(conn, j.ID)
		}
	}
	if (j.Status == bulk.Done || j.Status == bulk.Cancelled || j.Status == bulk.Failed) && j.Intent != "" &&
		j.Undoable && j.UndoneBy == "" && j.Acted > 0 {
		vm.UndoURL = route.BulkUndoURL(conn, j.ID)
	}
}

var bulkStatusText = map[bulk.Status]string{
	bulk.Counting:  "Counting the keys…",
	bulk.Counted:   "Counted: nothing has changed yet. Confirm to act on exactly these keys.",
	bulk.Running:   "Running…",
	bulk.Cancelled: "Cancelled: the keys not reached yet are untouched.",
	bulk.Done:      "Done.",
	bulk.Failed:    "Stopped by an error.",
}

func bulkLiveVM(j bulk.Job, o bulk.Options, as string) views.BulkLiveVM {
	vm := views.BulkLiveVM{Status: string(j.Status), StatusText: bulkStatusText[j.Status], Error: j.Error, Sample: j.Sample}
	vm.Counted = format.Plural(j.Count, "key", "keys") + " counted"
	if j.Scanned > 0 {
		vm.Counted += " (" + format.Count(j.Scanned) + " scanned)"
	}
	if j.Status == bulk.Counted && j.Count == 0 {
		vm.StatusText = "No key matches: nothing to do."
	}
	if j.Memory > 0 {
		vm.Memory = "Memory: " + format.Bytes(j.Memory) + " (MEMORY USAGE, summed)"
	}
	if j.MemoryUnknown > 0 {
		vm.Memory = strings.TrimPrefix(vm.Memory+"; ", "; ") + "memory unknown for " + format.Plural(j.MemoryUnknown, "key", "keys") +
			" (MEMORY USAGE refused or failed)"
	}
	if j.ItemBytes > 0 && j.Count > 0 && (j.Status == bulk.Counting || j.Status == bulk.Counted) {
		vm.Storage = fmt.Sprintf("The count is recorded in the audit Redis: %s (about %s bytes a key), kept %s unless confirmed, then 400 days.",
			format.ByteCount(j.ItemBytes), format.Count(j.ItemBytes/j.Count), format.Duration(o.PreviewTTL))
	}
	if j.Status != bulk.Counting {
		vm.Undoable = j.Undoable
		switch {
		case j.Undoable:
			vm.Undo = "Can be undone: the prior state of every key (value and expiry) is recorded, " + format.ByteCount(j.DumpBytes) + "."
		case j.Spec.Kind != bulk.KindUndo:
			vm.Undo = "This bulk action cannot be undone: " + j.UndoReason + "."
		}
	}
	if j.Status != bulk.Counting && j.Status != bulk.Counted && j.Count > 0 {
		vm.Max, vm.Value = j.Count, j.Next
		vm.Percent = strconv.FormatInt(j.Next*100/j.Count, 10) + "%"
		vm.Progress = fmt.Sprintf("%s of %s handled: %s acted on, %s skipped (%s changed since the count, %s gone, %s other).",
			format.Count(j.Next), format.Count(j.Count), format.Count(j.Acted), format.Count(j.Skipped()),
			format.Count(j.Changed), format.Count(j.Gone), format.Count(j.Other))
	}
	if j.Status == bulk.Running || j.Status == bulk.Counted {
		vm.Rate = rateText(o)
	}
	// The page's Confirm and Cancel go once they no longer apply (the live
	// update replaces them; the page drawn afresh offers what does).
	vm.NoStart = j.Status != bulk.Counted || j.Count == 0
	vm.NoCancel = j.Status != bulk.Counting && j.Status != bulk.Counted && j.Status != bulk.Running
	if as != string(j.Status) {
		vm.Reload, vm.Href = "Now "+string(j.Status)+": show its controls →", route.BulkJobURL(j.Spec.Sel.Conn, j.ID)
	}
	return vm
}

// The job's controls: each acts, then shows the job's page.

func (a *App) bulkStart(c echo.Context) error {
	j, err := a.bulkJobOf(c)
	if err != nil {
		return err
	}
	var typed int64
	if s := strings.TrimSpace(c.FormValue("typed")); s != "" {
		if typed, err = strconv.ParseInt(strings.ReplaceAll(s, ",", ""), 10, 64); err != nil {
			return withBack(fmt.Errorf("%w: type the number of keys as digits", action.ErrInvalid), route.BulkJobURL(j.Spec.Sel.Conn, j.ID))
		}
	}
	_, err = a.bulk.Start(c.Request().Context(), actor(c), j.ID, typed)
	return a.bulkDone(c, j, j.ID, err)
}

func (a *App) bulkCancel(c echo.Context) error {
	j, err := a.bulkJobOf(c)
	if err != nil {
		return err
	}
	return a.bulkDone(c, j, j.ID, a.bulk.Cancel(c.Request().Context(), actor(c), j.ID))
}

func (a *App) bulkResume(c echo.Context) error {
	j, err := a.bulkJobOf(c)
	if err != nil {
		return err
	}
	_, err = a.bulk.Resume(c.Request().Context(), actor(c), j.ID)
	return a.bulkDone(c, j, j.ID, err)
}

// bulkUndo makes the undo job and shows it, to be confirmed there.
func (a *App) bulkUndo(c echo.Context) error {
	j, err := a.bulkJobOf(c)
	if err != nil {
		return err
	}
	u, err := a.bulk.Undo(c.Request().Context(), actor(c), j.ID)
	return a.bulkDone(c, j, u.ID, err)
}

func (a *App) bulkDone(c echo.Context, j bulk.Job, show string, err error) error {
	if err != nil {
		a.log.Warn("bulk job refused", "user", actor(c).User, "job", j.ID, "err", err)
		return withBack(err, route.BulkJobURL(j.Spec.Sel.Conn, j.ID))
	}
	a.log.Info("bulk job", "user", actor(c).User, "job", j.ID, "path", c.Path())
	return c.Redirect(http.StatusSeeOther, route.BulkJobURL(j.Spec.Sel.Conn, show))
}

// bulkAuditRow: a bulk job's record is undone from the job's page, and
// only when the job recorded its priors.
func bulkAuditRow(row *views.AuditRow, r action.Record) {
	id := bulk.JobOf(r)
	if id == "" {
		return
	}
	row.Undoable = row.Undoable && r.Args["undoable"] != "no"
	row.UndoURL = route.BulkJobURL(r.Conn, id)
}
