package handlers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/redisview/bans"
	"github.com/keydeck/keydeck/redisview/console"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/views"
)

// Actions is what the key page and the confirmation steps need of the
// action runner (action.Runner).
type Actions interface {
	// Kinds are the registered kinds, in the order pages offer them.
	Kinds() []action.Kind
	Allowed(actor action.Actor, kind string) bool
	// Protected reports a key of Keydeck's own, which no action may change.
	Protected(key string) bool
	Preview(ctx context.Context, actor action.Actor, conn *redisview.Conn, kind string, req action.Request) (action.Preview, error)
	Execute(ctx context.Context, actor action.Actor, conn *redisview.Conn, pv action.Preview) (action.Outcome, error)
}

func actor(c echo.Context) action.Actor {
	id := identity(c)
	act := action.Actor{User: id.ActorName(), Level: id.Level}
	if id.Via == "token" {
		act.Token, act.TokenOwner = id.Token, id.User
	}
	return act
}

// keyPage shows one key's metadata and the actions the user may start.
func (a *App) keyPage(c echo.Context) error {
	conn, db, err := a.connDB(c)
	if err != nil {
		return err
	}
	key, err := route.ParseKey(c.QueryParams())
	if err != nil {
		return err
	}
	valueAt, err := route.ParseValue(c.QueryParams())
	if err != nil {
		return err
	}
	kv, err := a.keyView(c.Request().Context(), conn, db, key, valueAt)
	if err != nil {
		if errors.Is(err, route.ErrParam) {
			return err
		}
		if st := conn.Status(); !st.Up && !st.Checked.IsZero() {
			return fmt.Errorf("%s is %s: this key could not be read, so whether it exists is unknown. %w", conn.Name, statusText(st), err)
		}
		return fmt.Errorf("This key could not be read, so whether it exists is unknown. %w", err)
	}
	if !kv.vm.Exists {
		return missingKey(conn, db, key, "key")
	}
	vm, fam := kv.vm, kv.fam
	if route.Linkable(key) {
		vm.WSURL = route.LiveURL(KeyTopic{Conn: conn.Name, DB: db, Key: key, Value: valueAt}.String())
	} else {
		vm.LiveNote = keyLiveNote
	}
	// The form's body adds the kind and arguments.
	vm.PreviewURL = route.Action{Conn: conn.Name, DB: db, Key: key}.PreviewURL()
	if route.Linkable(key) && !a.protected(key) {
		vm.Export = route.ExportKeyURL(conn.Name, db, key)
	}
	forms, note := a.keyActions(actor(c), key, fam, vm.Type)
	for _, k := range forms {
		f := views.ActionForm{Kind: k.Name(), Title: k.Title(), Danger: k.Requires() == action.Admin}
		for _, arg := range k.Args() {
			f.Args = append(f.Args, argField(arg))
		}
		prefillEdit(&f, vm.Value)
		if offered(f, vm) {
			vm.Actions = append(vm.Actions, f)
		}
	}
	vm.ActionsNote = note
	return render(c, http.StatusOK, vm, views.KeyPage(a.page(c, "Key", conn.Name), vm))
}

// keyActions are the kinds of action the actor may run on a key of
// family fam (nil: none) and type typ, or a note saying why there are
// none. The key page's forms and the API's key (actions) are these.
func (a *App) keyActions(act action.Actor, key string, fam *schema.Family, typ string) ([]action.Kind, string) {
	switch {
	case a.auth.ReadOnly:
		return nil, "This console is read-only."
	case a.actions == nil:
		return nil, "Actions are not configured."
	case a.actions.Protected(key):
		return nil, "This key belongs to Keydeck itself (audit log, signing key or sign-in counters): no action may change it."
	}
	var out []action.Kind
	for _, k := range a.actions.Kinds() {
		if k.Name() == action.KindUndo || !a.actions.Allowed(act, k.Name()) {
			continue
		}
		if ap, ok := k.(interface{ AppliesTo(*schema.Family) bool }); ok && !ap.AppliesTo(fam) {
			continue
		}
		if kt, ok := k.(interface{ KeyType() string }); ok && kt.KeyType() != typ {
			continue // a member of a set is removed only from a set
		}
		out = append(out, k)
	}
	if len(out) == 0 {
		return nil, "Your role (" + act.Level.String() + ") has no actions on this key."
	}
	return out, ""
}

// sameSiteNavigation admits a GET only when the browser says it comes from
// this console's own pages (Sec-Fetch-Site same-origin) or from the person
// (none: typed, bookmarked). A browser too old to send Sec-Fetch-Site must
// send a same-origin Referer, which the console's pages always do
// (Referrer-Policy same-origin); a cross-site page cannot forge either.
func sameSiteNavigation(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		switch req.Header.Get("Sec-Fetch-Site") {
		case "same-origin", "none":
			return next(c)
		case "":
			if ref, err := url.Parse(req.Referer()); err == nil && ref.Host != "" && strings.EqualFold(ref.Host, req.Host) {
				return next(c)
			}
		}
		return echo.NewHTTPError(http.StatusForbidden, "Open actions from the console's own pages: this link came from another site (or did not say where it came from), and a preview reads the keys it names.")
	}
}

// actionRequest reads kind, conn, db, key and arg.* from the form.
func actionRequest(c echo.Context) (string, action.Request, error) {
	form, err := c.FormParams()
	if err != nil {
		return "", action.Request{}, echo.NewHTTPError(http.StatusBadRequest, "The form could not be read.")
	}
	t, err := route.ParseAction(form)
	if err != nil {
		return "", action.Request{}, err
	}
	return t.Kind, action.Request{Conn: t.Conn, DB: t.DB, Key: t.Key, Args: t.Args}, nil
}

// previewAction shows exactly what an action will do, with a signed token
// for the confirmation.
func (a *App) previewAction(c echo.Context) error {
	kind, req, err := actionRequest(c)
	if err != nil {
		return err
	}
	back := "/"
	if req.Key != "" {
		back = route.KeyURL(req.Conn, req.DB, req.Key)
	} else if b := serverBack(kind, req); b != "" {
		back = b
	}
	return a.preview(c, kind, req, back)
}

func (a *App) preview(c echo.Context, kind string, req action.Request, back string) error {
	conn, err := a.conns.Get(req.Conn)
	if err != nil {
		return withBack(err, back)
	}
	pv, err := a.actions.Preview(c.Request().Context(), actor(c), conn, kind, req)
	if err != nil {
		return withBack(err, back)
	}
	vm := views.ConfirmVM{Title: pv.Title, Summary: pv.Summary, Notes: pv.Notes, Undoable: pv.Undoable,
		Token: a.signer.Seal("action", []byte(pv.Token())), Cancel: back, Conn: conn.Name, DB: req.DB, UndoNote: pv.UndoNote}
	if pv.Server != nil {
		vm.Server = serverWhere(pv.Server.Node)
	}
	for _, ch := range pv.Changes {
		vm.Changes = append(vm.Changes, views.ChangeRow{Key: ch.Key, Text: ch.Text, After: ch.After})
	}
	// Each change is said once: one change is the summary itself; several
	// are listed, and the summary (their texts joined) is not repeated.
	switch {
	case len(vm.Changes) == 1 && vm.Changes[0].Text == vm.Summary:
		vm.Changes[0].Text = ""
	case changeText(pv.Changes) == vm.Summary:
		vm.Summary = ""
	}
	return render(c, http.StatusOK, vm, views.ConfirmPage(a.page(c, "Confirm "+pv.Title, conn.Name), vm))
}

// executeAction runs a confirmed preview.
func (a *App) executeAction(c echo.Context) error {
	raw, err := a.signer.Unseal("action", c.FormValue("token"))
	if err != nil {
		return withBack(fmt.Errorf("%w: the confirmation was tampered with or comes from another console; preview again", action.ErrInvalid), route.Home)
	}
	pv, err := action.ParseToken(string(raw))
	if err != nil {
		return withBack(err, route.Home)
	}
	back := route.Audit
	if pv.Request.Key != "" && pv.Kind != action.KindUndo {
		back = route.KeyURL(pv.Request.Conn, pv.Request.DB, pv.Request.Key)
	} else if b := serverBack(pv.Kind, pv.Request); b != "" {
		back = b
	}
	conn, err := a.conns.Get(pv.Request.Conn)
	if err != nil {
		return withBack(err, back)
	}
	out, err := a.actions.Execute(c.Request().Context(), actor(c), conn, pv)
	if err != nil {
		a.log.Warn("action failed", "user", actor(c).User, "action", pv.Kind, "conn", conn.Name, "db", pv.Request.DB, "err", err)
		return withBack(err, back)
	}
	a.executed(c, conn, pv, out)
	if out.ID != "" && out.AuditWarning == "" {
		// Post, redirect, get: a reload shows the record, never runs the
		// confirmation again, and the address is the record's to share.
		return c.Redirect(http.StatusSeeOther, route.AuditRecordURL(out.ID))
	}
	// No outcome record to show: say here what was done, and why it is
	// not in the log.
	vm := views.ResultVM{
		OK: true, Title: "Done: " + out.Summary, Message: changeText(out.Changes), AuditID: out.ID, Warning: out.AuditWarning, Back: back,
	}
	if vm.Message == out.Summary {
		vm.Message = "" // the title says it
	}
	return render(c, http.StatusOK, vm, views.ResultPage(a.page(c, "Done", conn.Name), vm))
}

// executed logs an executed action and refreshes what it changed: the
// live views of its database, a ban list's consistency check.
func (a *App) executed(c echo.Context, conn *redisview.Conn, pv action.Preview, out action.Outcome) {
	a.log.Info("action done", "user", actor(c).User, "action", out.Kind, "conn", conn.Name, "db", pv.Request.DB, "audit", out.ID)
	a.hub.Kick(DBTopic{Conn: conn.Name, DB: pv.Request.DB}.String())
	a.reads.forget(conn.Name)
	if out.Kind != action.KindBan && out.Kind != action.KindUnban {
		// A rebuilt bloom, a member's bits set, or either undone: the
		// consistency check's verdict was of the state this replaced.
		if l, ok := bans.ForKey(conn.Pack(), pv.Request.DB, pv.Request.Key); ok {
			bans.CheckerFor(conn, l).Restart()
		}
	}
}

func changeText(chs []action.Change) string {
	var parts []string
	for _, ch := range chs {
		parts = append(parts, ch.Text)
	}
	return strings.Join(parts, "; ")
}

// serverBack is the page an action on a server returns to: the page its
// form is on, on the same node; "" for other kinds.
func serverBack(kind string, req action.Request) string {
	node := req.Args[action.ArgNode]
	switch kind {
	case action.KindConfigSet:
		return route.OnNode(route.ServerInfoURL(req.Conn), node)
	case action.KindKillClient:
		return route.OnNode(route.ClientsURL(req.Conn), node)
	case console.KindDangerous, console.KindCommand:
		return route.OnNode(route.ConsoleURL(req.Conn), node)
	}
	return ""
}
