package handlers

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"

	"github.com/labstack/echo/v4"

	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/redisview/server"
	"github.com/keydeck/keydeck/views"
)

// serverPage shows one server's INFO, MEMORY STATS and DOCTOR, and its
// configuration with a change form per setting for admins.
func (a *App) serverPage(c echo.Context) error {
	conn, err := a.conns.Get(c.Param("conn"))
	if err != nil {
		return err
	}
	srv, err := serverOf(c, conn, route.ServerInfoURL)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	vm := views.ServerVM{Conn: conn.Name, Server: srv.Node.Label(), Picker: srv.Picker, Node: srv.Node.Addr,
		Disconnected: disconnectedLine(conn)}
	if a.actions != nil && a.actions.Allowed(actor(c), action.KindConfigSet) {
		vm.CanChange, vm.ChangeKind = true, action.KindConfigSet
	}
	r := shared(ctx, a, "server", conn.Name, srv.Node.Addr, "", func(ctx context.Context) serverReads { return readServer(ctx, srv.Server) })
	info, mem, doctor, cfg, errs := r.info, r.mem, r.doctor, r.cfg, r.errs
	vm.InfoErr = panelErr("INFO", errs[0])
	vm.MemoryErr = panelErr("MEMORY STATS", errs[1])
	vm.DoctorErr = panelErr("MEMORY DOCTOR", errs[2])
	vm.ConfigErr = panelErr("the configuration (CONFIG GET)", errs[3])
	vm.Doctor = doctor
	for _, s := range info.Sections {
		vm.Info = append(vm.Info, views.InfoSectionVM{Name: s.Name, Fields: fieldsVM(s.Fields)})
	}
	vm.Memory = fieldsVM(mem)
	for _, g := range cfg.Groups {
		gv := views.ConfigGroupVM{Name: g.Name}
		for _, p := range g.Params {
			gv.Params = append(gv.Params, views.ConfigParamVM{Name: p.Name, Value: p.Value, Withheld: p.Withheld})
		}
		vm.Config = append(vm.Config, gv)
	}
	return render(c, http.StatusOK, vm, views.ServerPage(a.page(c, "Server · "+conn.Name, conn.Name), vm))
}

func fieldsVM(fs []server.Field) []views.InfoFieldVM {
	out := make([]views.InfoFieldVM, 0, len(fs))
	for _, f := range fs {
		out = append(out, views.InfoFieldVM{Name: f.Name, Value: f.Shown, Raw: f.Raw, Help: f.Help})
	}
	return out
}

// panelErr says why one panel of a server page is empty: the server
// refused the command (ACL, a managed Redis without it), or did not answer.
func panelErr(what string, err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, server.ErrRefused):
		return "Not shown: " + strings.TrimRight(err.Error(), ". ") + "."
	}
	return what + " could not be read: the server did not answer (" + err.Error() + ")."
}

// disconnectedLine says the connection is down, or "".
func disconnectedLine(conn *redisview.Conn) string {
	if st := conn.Status(); !st.Up && !st.Checked.IsZero() {
		return conn.Name + " is " + statusText(st) + ": what follows could not be read."
	}
	return ""
}

// serverWhere names the server an action acted on: "this server" (the
// connection's own) or "server host:port" (a cluster node).
func serverWhere(node string) string {
	if node == "" {
		return "this server"
	}
	return "server " + node
}

// serverReads is what the server page reads, shared by its viewers.
type serverReads struct {
	info   server.Info
	mem    []server.Field
	doctor string
	cfg    server.Config
	errs   [4]error
}

// readServer runs four independent reads: a server that does not answer
// costs one timeout, not four.
func readServer(ctx context.Context, srv redisview.Server) serverReads {
	var (
		wg sync.WaitGroup
		r  serverReads
	)
	wg.Add(4)
	go func() { defer wg.Done(); r.info, r.errs[0] = server.ReadInfo(ctx, srv) }()
	go func() { defer wg.Done(); r.mem, r.errs[1] = server.ReadMemoryStats(ctx, srv) }()
	go func() { defer wg.Done(); r.doctor, r.errs[2] = server.ReadMemoryDoctor(ctx, srv) }()
	go func() { defer wg.Done(); r.cfg, r.errs[3] = server.ReadConfig(ctx, srv) }()
	wg.Wait()
	return r
}
