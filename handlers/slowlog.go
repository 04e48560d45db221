package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/keydeck/keydeck/internal/live"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/redisview/server"
	"github.com/keydeck/keydeck/views"
	"github.com/keydeck/keydeck/views/format"
)

// slowlogPage shows one server's slowlog; the websocket keeps it live.
func (a *App) slowlogPage(c echo.Context) error {
	conn, err := a.conns.Get(c.Param("conn"))
	if err != nil {
		return err
	}
	srv, err := serverOf(c, conn, route.SlowlogURL)
	if err != nil {
		return err
	}
	hide, err := hideOwnOf(c.QueryParam("own"))
	if err != nil {
		return err
	}
	sl := a.readSlowlog(c.Request().Context(), conn, srv.Server, sharedReadFor)
	vm := slowlogVM(SlowlogTopic{Conn: conn.Name, Node: srv.Node.Addr, HideOwn: hide}, sl)
	vm.Picker = srv.Picker
	vm.OwnNote = fmt.Sprintf("Keydeck's own reads (this page reads SLOWLOG and CONFIG GET, at most every %s) may appear in the log, marked as Keydeck's; at threshold 0 every one does.",
		format.Duration(slowlogEvery))
	q := url.Values{"own": {"hide"}}
	vm.OwnToggleLabel = "Hide Keydeck's own"
	if hide {
		q.Set("own", "show")
		vm.OwnToggleLabel = "Show Keydeck's own"
	}
	if srv.Node.Addr != "" && conn.IsCluster() {
		q.Set(route.NodeParam, srv.Node.Addr)
	}
	vm.OwnToggleHref = route.SlowlogURL(conn.Name) + "?" + q.Encode()
	if a.mayConfigure(c) && sl.Threshold.OK {
		vm.Form = a.configForm(c, conn.Name, srv.Node.Addr, "slowlog-log-slower-than", strconv.FormatInt(sl.Threshold.V, 10),
			"Log commands slower than (microseconds; 0 logs every command, -1 none)", "Preview the change…", "slowlog-threshold-form")
	}
	return render(c, http.StatusOK, vm, views.SlowlogPage(a.page(c, "Slowlog · "+conn.Name, conn.Name), vm))
}

// ownKey names Keydeck's own keys (the audit log under its configured
// name too); nil leaves it to the slowlog's default.
func (a *App) ownKey() func(string) bool {
	if a.actions == nil {
		return nil
	}
	return a.actions.Protected
}

// mayConfigure: the request's user may change server settings through
// the config-set action (admins, on a console that is not read-only); the
// forms are not shown to anyone else.
func (a *App) mayConfigure(c echo.Context) bool {
	return a.actions != nil && !a.auth.ReadOnly && a.actions.Allowed(actor(c), action.KindConfigSet)
}

// configForm previews setting parameter on node (its current value
// prefilled).
func (a *App) configForm(c echo.Context, conn, node, parameter, current, help, button, testID string) *views.ConfigForm {
	csrf, _ := c.Get(ctxCSRF).(string)
	u := route.Action{Kind: action.KindConfigSet, Conn: conn, Args: map[string]string{action.ArgParameter: parameter, action.ArgNode: node}}.PreviewURL()
	return &views.ConfigForm{PreviewURL: u, CSRF: csrf, Parameter: parameter, Value: current, Help: help, Button: button, TestID: testID}
}

// slowlogEvery: a live slowlog reads the server at most this often. Its
// reads are logged too at threshold 0, and a read a second per viewer
// would push the application's entries out of a 128-entry log.
const slowlogEvery = 5 * time.Second

// hideOwnOf reads ?own=: "hide" leaves Keydeck's own entries out.
func hideOwnOf(v string) (bool, error) {
	switch v {
	case "", "show":
		return false, nil
	case "hide":
		return true, nil
	}
	return false, fmt.Errorf("%w: own is show or hide, not %q", route.ErrParam, views.ValidText(v))
}

func slowlogVM(t SlowlogTopic, sl server.Slowlog) views.SlowlogVM {
	conn, node := t.Conn, t.Node
	vm := views.SlowlogVM{Conn: conn, Node: node, WSURL: route.LiveURL(t.String())}
	switch t := sl.Threshold; {
	case !t.OK:
		vm.Threshold = "Threshold " + t.Why
	case t.V < 0:
		vm.Threshold = "Logging is off (slowlog-log-slower-than " + strconv.FormatInt(t.V, 10) + ")"
	case t.V == 0:
		vm.Threshold = "Every command is logged (slowlog-log-slower-than 0)"
	default:
		vm.Threshold = "Commands slower than " + micros(time.Duration(t.V)*time.Microsecond) + " are logged"
	}
	vm.MaxLen = "the server keeps " + optText(sl.MaxLen, func(n int64) string { return format.Plural(n, "entry", "entries") }) + " at most"
	if sl.Len.OK {
		vm.Count = fmt.Sprintf("%s now; the newest %d read", format.Plural(sl.Len.V, "entry", "entries"), server.SlowlogMax)
	} else {
		vm.Count = sl.Len.Why
	}
	if sl.Down {
		vm.Down = "Disconnected: " + sl.Err
		return vm
	}
	vm.Err = sl.Err
	if sl.Err == "" && len(sl.Entries) == 0 {
		vm.Empty = "The slowlog is empty: no command was slower than the threshold since it was last reset."
	}
	hidden := 0
	for _, e := range sl.Entries {
		if t.HideOwn && e.Own {
			hidden++
			continue
		}
		vm.Entries = append(vm.Entries, slowRow(e))
	}
	if hidden > 0 {
		vm.Count += "; " + format.Plural(int64(hidden), "entry", "entries") + " of Keydeck's own hidden"
		if len(vm.Entries) == 0 {
			vm.Empty = "Every entry read is Keydeck's own, hidden here."
		}
	}
	return vm
}

func slowRow(e server.SlowEntry) views.SlowRow {
	r := views.SlowRow{ID: strconv.FormatInt(e.ID, 10), Time: format.Time(e.Time), Duration: micros(e.Duration),
		Command: e.Command, Withheld: e.Withheld, Client: e.ClientAddr, Name: e.ClientName, Own: e.Own}
	for _, a := range e.Args {
		sa := views.SlowArg{Text: a.Text, Size: int64(len(a.Text) + a.More)}
		if a.More > 0 {
			sa.More = "… " + format.Plural(int64(a.More), "more byte", "more bytes")
		}
		r.Args = append(r.Args, sa)
	}
	if e.MoreArgs > 0 {
		r.More = "… " + format.Plural(int64(e.MoreArgs), "more argument", "more arguments")
	}
	return r
}

// micros writes a command's duration to the microsecond: slowlog
// thresholds are set in microseconds, and most entries take less than a
// millisecond.
func micros(d time.Duration) string {
	us := d.Microseconds()
	switch {
	case us < 1000:
		return strconv.FormatInt(us, 10) + " µs"
	case us < 1_000_000:
		return strconv.FormatFloat(float64(us)/1000, 'f', -1, 64) + " ms"
	}
	return strconv.FormatFloat(float64(us)/1e6, 'f', 3, 64) + " s"
}

func optText[T any](o redisview.Opt[T], f func(T) string) string {
	if !o.OK {
		return o.Why
	}
	return f(o.V)
}

const slowlogKind = "slowlog"

// SlowlogTopic is one server's slowlog, live:
// "slowlog:conn=NAME&node=ADDR" (node "" is the connection's own server).
type SlowlogTopic struct {
	Conn, Node string
	HideOwn    bool // "&own=hide": Keydeck's own entries left out
}

func (t SlowlogTopic) String() string {
	q := url.Values{"conn": {t.Conn}, "node": {t.Node}}
	if t.HideOwn {
		q.Set("own", "hide")
	}
	return slowlogKind + ":" + q.Encode()
}

func (SlowlogTopic) Level() action.Level { return action.Viewer }

func parseSlowlogTopic(arg string) (Topic, error) {
	q, err := url.ParseQuery(arg)
	if err != nil || !redisview.ValidName(q.Get("conn")) {
		return nil, ErrUnknownTopic
	}
	hide, err := hideOwnOf(q.Get("own"))
	if err != nil {
		return nil, ErrUnknownTopic
	}
	return SlowlogTopic{Conn: q.Get("conn"), Node: q.Get("node"), HideOwn: hide}, nil
}

// source resolves the server afresh each poll: a cluster node may leave.
func (t SlowlogTopic) source(a *App) (func() live.Source, error) {
	conn, err := a.conns.Get(t.Conn)
	if err != nil {
		return nil, err
	}
	return func() live.Source {
		return live.SourceFunc(func(ctx context.Context) ([]byte, error) {
			srv, err := conn.Server(ctx, t.Node)
			vm := views.SlowlogVM{Conn: conn.Name, Node: t.Node}
			if err == nil {
				vm = slowlogVM(SlowlogTopic{Conn: conn.Name, Node: srv.Node.Addr, HideOwn: t.HideOwn}, a.readSlowlog(ctx, conn, srv, slowlogEvery))
			} else {
				vm.Down = "This server could not be read: " + conn.SafeErr(err)
			}
			return renderBytes(ctx, views.SlowlogLive(vm, true))
		})
	}, nil
}
