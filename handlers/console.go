package handlers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/redisview/console"
	"github.com/keydeck/keydeck/views"
)

// ConsoleHistory keeps each person's console lines (console.History).
type ConsoleHistory interface {
	Add(ctx context.Context, user string, args []string, withheld bool) error
	List(ctx context.Context, user string) ([]console.Entry, error)
}

// consoleDeadline bounds one console command (its checks, then the
// command): a read the bounds let through answers well within it.
const consoleDeadline = 10 * time.Second

// consoleTarget is the server and database a console request runs on.
type consoleTarget struct {
	conn *redisview.Conn
	srv  onServer // the node picker
	on   console.On
	db   int
}

// consoleTargetOf resolves the request's connection, ?node= and db (the
// query's, or the form's): a cluster node runs database 0 only.
func (a *App) consoleTargetOf(c echo.Context) (consoleTarget, error) {
	conn, err := a.conns.Get(c.Param("conn"))
	if err != nil {
		return consoleTarget{}, err
	}
	conn.EnsurePack(a.conns.Packs())
	srv, err := serverOf(c, conn, route.ConsoleURL)
	if err != nil {
		return consoleTarget{}, err
	}
	db := conn.BaseDB
	if s := c.FormValue("db"); s != "" {
		if db, err = route.ParseDB(s); err != nil {
			return consoleTarget{}, err
		}
	}
	on, err := console.At(c.Request().Context(), conn, srv.Node.Addr, db)
	if errors.Is(err, console.ErrClusterDB) {
		return consoleTarget{}, fmt.Errorf("%w: %v", route.ErrParam, err)
	}
	if err != nil {
		return consoleTarget{}, err
	}
	return consoleTarget{conn: conn, srv: srv, on: on, db: db}, nil
}

// consolePage shows the console's form, prefilled with ?command= (a
// history line reused); it runs nothing.
func (a *App) consolePage(c echo.Context) error {
	t, err := a.consoleTargetOf(c)
	if err != nil {
		return err
	}
	vm := a.consoleVM(c, t)
	vm.Command = c.QueryParam("command")
	return render(c, http.StatusOK, vm, views.ConsolePage(a.page(c, "Console · "+t.conn.Name, t.conn.Name), vm))
}

// runConsole runs a read, or previews a write through the action path.
func (a *App) runConsole(c echo.Context) error {
	t, err := a.consoleTargetOf(c)
	if err != nil {
		return err
	}
	vm := a.consoleVM(c, t)
	line := c.FormValue("command")
	vm.Command = line
	page := func(status int) error {
		return render(c, status, vm, views.ConsolePage(a.page(c, "Console · "+t.conn.Name, t.conn.Name), vm))
	}
	args, err := console.Split(line)
	if err == nil && len(args) == 0 {
		err = errors.New("type a command")
	}
	if err == nil && len(args) > console.MaxArgs {
		// Refused before the budget is drawn: each argument that may be
		// a key costs checks, and one line must not spend the connection's
		// budget for everyone (review C L3).
		err = fmt.Errorf("%d arguments; the console takes at most %d", len(args), console.MaxArgs)
	}
	if err != nil {
		vm.Error = "The command line cannot be read: " + err.Error() + "."
		return page(http.StatusBadRequest)
	}
	if secs, ok := a.consoleTake(c.Request().Context(), t.conn.Name, identity(c).Holder(), console.Cost(args)); !ok {
		c.Response().Header().Set("Retry-After", strconv.Itoa(secs))
		vm.Error = fmt.Sprintf("Busy: the commands and searches people run on %s share a budget of Redis work, and yours is spent for now. Try again in %d s.", t.conn.Name, secs)
		return page(http.StatusTooManyRequests)
	}
	ctx, cancel := context.WithTimeout(c.Request().Context(), consoleDeadline)
	defer cancel()
	table, err := t.on.Table(ctx)
	if err != nil {
		vm.Error = a.consoleErr(t.conn, err)
		return page(http.StatusBadGateway)
	}
	id := identity(c)
	d, err := t.on.Decide(ctx, table, console.Request{
		Args: args, Level: id.Level, ReadOnly: a.auth.ReadOnly, AllowDangerous: a.consoleDangerous,
		Sensitive: t.conn.Sensitive, Protected: a.protected,
	})
	var refused *console.Refused
	switch {
	case errors.As(err, &refused):
		vm.Refusal, vm.RefusalLink, vm.RefusalLinkText = refusalView(t, refused)
		vm.Class = d.Class.String()
		if errors.Is(err, action.ErrForbidden) {
			return page(http.StatusForbidden)
		}
		return page(http.StatusBadRequest)
	case console.IsReply(err):
		vm.Reply = console.Format(nil, err).Text // the server's answer to the arguments
		return page(http.StatusOK)
	case err != nil:
		vm.Error = a.consoleErr(t.conn, err)
		return page(http.StatusBadGateway)
	}
	a.remember(c, t, args, d.Keys)
	if d.Class == console.Dangerous {
		// Allowed by --console-allow-dangerous: the preview comes after
		// the connection's name is typed (the kind checks it again).
		if a.actions == nil || !a.actions.Allowed(actor(c), console.KindDangerous) {
			vm.Refusal = "Dangerous commands are not offered by this Keydeck's actions."
			return page(http.StatusForbidden)
		}
		vm.Dangerous = &views.DangerousForm{Line: console.Line(args), Node: t.srv.Node.Addr, Kind: console.KindDangerous}
		return page(http.StatusOK)
	}
	if d.Class == console.Write {
		if a.actions == nil {
			return withBack(errors.New("actions are not configured, so the console runs no write"), route.ConsoleURL(t.conn.Name))
		}
		req := action.Request{Conn: t.conn.Name, DB: t.db, Args: map[string]string{console.ArgCommand: console.Line(args)}}
		return a.preview(c, console.KindCommand, req, consoleBack(t))
	}
	return page(a.consoleRead(ctx, t, &vm, d, args, line))
}

// consoleRead runs a read Decide let through, filling vm with its reply
// or why it did not run, and says the page's status.
func (a *App) consoleRead(ctx context.Context, t consoleTarget, vm *views.ConsoleVM, d console.Decision, args []string, line string) int {
	r, err := t.on.Read(ctx, d, args)
	var refused *console.Refused
	switch {
	case errors.As(err, &refused):
		// Its keys hold more bytes than one read may bring back.
		vm.Refusal, vm.RefusalLink, vm.RefusalLinkText = refusalView(t, refused)
		vm.Class = d.Class.String()
		return http.StatusForbidden
	case err != nil:
		vm.Error = a.consoleErr(t.conn, err)
		return http.StatusBadGateway
	}
	vm.Reply, vm.Truncated, vm.Class, vm.Ran = r.Text, r.Truncated, d.Class.String(), console.Line(args)
	if f := strings.Fields(r.Text); len(f) >= 4 && f[0] == "(error)" && f[1] == "MOVED" && t.conn.IsCluster() {
		// redis-cli without -c: the line runs on the node picked; the
		// answer names the node that holds the key.
		vm.Moved = route.OnNode(route.ConsoleURL(t.conn.Name), f[3]) + "&command=" + url.QueryEscape(line)
	}
	return http.StatusOK
}

// protected: a key of Keydeck's own, which the console neither reads nor
// changes (the audit log, sessions, tokens on the audit server).
func (a *App) protected(key string) bool {
	if a.actions != nil {
		return a.actions.Protected(key)
	}
	return strings.HasPrefix(key, "keydeck:")
}

// remember adds a line that ran or was previewed to the person's history;
// a line naming a sensitive key keeps only its command name. A refused
// line is not kept: it may hold what it was refused for (AUTH's password).
func (a *App) remember(c echo.Context, t consoleTarget, args, keys []string) {
	if a.consoleHistory == nil {
		return
	}
	withheld := slices.ContainsFunc(keys, func(k string) bool { return t.conn.Sensitive(t.db, k) })
	if err := a.consoleHistory.Add(c.Request().Context(), historyHolder(c), args, withheld); err != nil {
		a.log.Warn("console history not recorded", "err", err)
	}
}

func (a *App) consoleErr(conn *redisview.Conn, err error) string {
	if errors.Is(err, console.ErrNoCommandTable) {
		return err.Error() + ": without it the console cannot tell a read from a write, so it runs nothing. Give Keydeck's Redis user the COMMAND command (+command)."
	}
	return "Redis did not answer: " + conn.SafeErr(err)
}

func consoleBack(t consoleTarget) string {
	return route.OnNode(route.ConsoleURL(t.conn.Name), t.srv.Node.Addr)
}

// refusalView words a refusal and links the page that does its job.
func refusalView(t consoleTarget, r *console.Refused) (string, string, string) {
	name := t.conn.Name
	onNode := func(u string) string { return route.OnNode(u, t.srv.Node.Addr) }
	msg := r.Error()
	for _, s := range []error{action.ErrForbidden, action.ErrInvalid} {
		msg = strings.TrimPrefix(msg, s.Error()+": ")
	}
	switch r.Page {
	case console.KeyPage:
		return msg, route.KeyURL(name, t.db, r.Key), "Open the key's page"
	case console.KeyBrowser:
		return msg, route.KeysPath(name, t.db), "Browse the keys of database " + strconv.Itoa(t.db)
	case console.ServerPage:
		return msg, onNode(route.ServerInfoURL(name)), "Open the server page"
	case console.ClientsPage:
		return msg, onNode(route.ClientsURL(name)), "Open the clients page"
	case console.SlowlogPage:
		return msg, onNode(route.SlowlogURL(name)), "Open the slowlog"
	case console.LatencyPage:
		return msg, onNode(route.LatencyURL(name)), "Open the latency page"
	case console.PubSubPage:
		return msg, onNode(route.PubSubURL(name)), "Open the Pub/Sub page"
	}
	return msg, "", ""
}

// consoleVM is the page around the form: where it runs, the rules for
// the person's role, their history.
func (a *App) consoleVM(c echo.Context, t consoleTarget) views.ConsoleVM {
	id := identity(c)
	vm := views.ConsoleVM{
		Conn: t.conn.Name, Action: consoleBack(t), DB: t.db, Cluster: t.conn.IsCluster(),
		Picker: t.srv.Picker, Node: t.srv.Node.Label(), Role: id.Level.String(),
		Writes: id.Level >= action.Admin && !a.auth.ReadOnly && a.actions != nil, ReadOnly: a.auth.ReadOnly,
		AllowDangerous: a.consoleDangerous,
	}
	if a.consoleHistory != nil {
		hist, err := a.consoleHistory.List(c.Request().Context(), historyHolder(c))
		if err != nil {
			vm.HistoryErr = "Your history could not be read: the audit server did not answer."
		}
		for _, e := range hist {
			line := e.Line
			if e.Withheld {
				line += " "
			}
			q := route.OnNode(route.ConsoleURL(t.conn.Name), t.srv.Node.Addr)
			sep := "?"
			if strings.Contains(q, "?") {
				sep = "&"
			}
			vm.History = append(vm.History, views.HistoryRow{Line: e.Line, Withheld: e.Withheld,
				Href: q + sep + "db=" + strconv.Itoa(t.db) + "&command=" + url.QueryEscape(line)})
		}
	}
	return vm
}

// historyHolder names whose history a request reads and adds to: the
// account's (a token's owner), or, without sign-in, the one everyone shares.
func historyHolder(c echo.Context) string {
	if id := identity(c); id.User != "" {
		return id.Holder()
	}
	return "open"
}
