package handlers

import (
	"cmp"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/redisview/server"
	"github.com/keydeck/keydeck/views"
	"github.com/keydeck/keydeck/views/format"
)

// maxClientRows caps the client table: a server may have thousands of
// connections, and a page of more tells a person nothing more.
const maxClientRows = 500

const maxClientFilter = 256

// clientColumn is a sortable column of the clients table.
type clientColumn struct {
	key, label string
	right      bool
	cmp        func(a, b server.Client) int
}

var clientColumns = []clientColumn{
	{"id", "ID", true, func(a, b server.Client) int { return cmp.Compare(a.ID, b.ID) }},
	{"addr", "Address", false, func(a, b server.Client) int { return strings.Compare(a.Addr, b.Addr) }},
	{"name", "Name", false, func(a, b server.Client) int { return strings.Compare(a.Name, b.Name) }},
	{"user", "User", false, func(a, b server.Client) int { return strings.Compare(a.User, b.User) }},
	{"db", "DB", true, func(a, b server.Client) int { return cmp.Compare(a.DB, b.DB) }},
	{"age", "Age", true, func(a, b server.Client) int { return cmp.Compare(a.Age, b.Age) }},
	{"idle", "Idle", true, func(a, b server.Client) int { return cmp.Compare(a.Idle, b.Idle) }},
	{"cmd", "Last command", false, func(a, b server.Client) int { return strings.Compare(a.Cmd, b.Cmd) }},
	{"qbuf", "Query buf", true, func(a, b server.Client) int { return cmp.Compare(a.QBuf, b.QBuf) }},
	{"omem", "Output mem", true, func(a, b server.Client) int { return cmp.Compare(a.OMem, b.OMem) }},
	{"totmem", "Total mem", true, func(a, b server.Client) int { return cmp.Compare(a.TotMem, b.TotMem) }},
	{"flags", "Flags", false, func(a, b server.Client) int { return strings.Compare(a.Flags, b.Flags) }},
}

// clientsQuery is the page's ?sort= (a column, "-" before it for
// descending) and ?q= (a text every shown client contains).
type clientsQuery struct {
	sort string
	col  clientColumn
	desc bool
	q    string
}

func parseClientsQuery(q url.Values) (clientsQuery, error) {
	cq := clientsQuery{sort: q.Get("sort"), q: q.Get("q")}
	if len(cq.q) > maxClientFilter {
		return cq, fmt.Errorf("%w: the filter is %s long; at most %s", route.ErrParam, format.ByteCount(int64(len(cq.q))), format.ByteCount(maxClientFilter))
	}
	key := cq.sort
	key, cq.desc = strings.CutPrefix(key, "-")
	if key == "" {
		key = "id"
	}
	i := slices.IndexFunc(clientColumns, func(c clientColumn) bool { return c.key == key })
	if i < 0 {
		keys := make([]string, len(clientColumns))
		for j, c := range clientColumns {
			keys[j] = c.key
		}
		return cq, fmt.Errorf("%w: sort %q is none of %s (a leading - sorts descending)", route.ErrParam, cq.sort, strings.Join(keys, ", "))
	}
	cq.col = clientColumns[i]
	return cq, nil
}

// matches reports a client the filter names, in any of the columns shown
// as text (case-insensitive), or by its id.
func (cq clientsQuery) matches(cl server.Client) bool {
	if cq.q == "" {
		return true
	}
	q := strings.ToLower(cq.q)
	for _, s := range []string{cl.Addr, cl.Name, cl.User, cl.Cmd, cl.Flags, cl.LAddr} {
		if strings.Contains(strings.ToLower(s), q) {
			return true
		}
	}
	return strconv.FormatInt(cl.ID, 10) == cq.q
}

// clientsPage lists one server's connections, Keydeck's own marked, with
// a kill button per client for admins.
func (a *App) clientsPage(c echo.Context) error {
	conn, err := a.conns.Get(c.Param("conn"))
	if err != nil {
		return err
	}
	cq, err := parseClientsQuery(c.QueryParams())
	if err != nil {
		return err
	}
	srv, err := serverOf(c, conn, route.ClientsURL)
	if err != nil {
		return err
	}
	here := route.OnNode(route.ClientsURL(conn.Name), srv.Node.Addr)
	vm := views.ClientsVM{Conn: conn.Name, Server: srv.Node.Label(), Picker: srv.Picker, Node: srv.Node.Addr,
		FormAction: route.ClientsURL(conn.Name), Filter: views.ValidText(cq.q), Sort: cq.sort, Disconnected: disconnectedLine(conn)}
	if a.actions != nil && a.actions.Allowed(actor(c), action.KindKillClient) {
		vm.KillKind = action.KindKillClient
	}
	vm.Columns = clientHeaders(here, cq)
	list, err := a.readClients(c.Request().Context(), conn.Name, srv.Server)
	if err != nil {
		vm.Err = panelErr("The client list (CLIENT LIST)", err)
		vm.Count = "Not known."
		return render(c, http.StatusOK, vm, views.ClientsPage(a.page(c, "Clients · "+conn.Name, conn.Name), vm))
	}
	shown := slices.DeleteFunc(slices.Clone(list), func(cl server.Client) bool { return !cq.matches(cl) })
	slices.SortStableFunc(shown, func(x, y server.Client) int {
		if cq.desc {
			return cmp.Or(cq.col.cmp(y, x), cmp.Compare(x.ID, y.ID))
		}
		return cmp.Or(cq.col.cmp(x, y), cmp.Compare(x.ID, y.ID))
	})
	vm.Count = clientsCount(len(shown), len(list), cq.q != "")
	if len(shown) == 0 {
		vm.Empty = "No client matches “" + views.ValidText(cq.q) + "”."
	}
	for _, cl := range shown[:min(len(shown), maxClientRows)] {
		vm.Rows = append(vm.Rows, clientRow(cl))
	}
	return render(c, http.StatusOK, vm, views.ClientsPage(a.page(c, "Clients · "+conn.Name, conn.Name), vm))
}

func clientsCount(shown, total int, filtered bool) string {
	s := format.Plural(int64(total), "client", "clients")
	if filtered {
		s = format.Count(int64(shown)) + " of " + s + " match"
	}
	if shown > maxClientRows {
		s += fmt.Sprintf("; the first %d shown (filter to see others)", maxClientRows)
	}
	return s
}

// clientHeaders are the column links: sorted by the column, ascending,
// or descending when it is already the ascending sort.
func clientHeaders(here string, cq clientsQuery) []views.ClientColumn {
	out := make([]views.ClientColumn, len(clientColumns))
	for i, col := range clientColumns {
		v := views.ClientColumn{Label: col.label, Right: col.right}
		sort := col.key
		if col.key == cq.col.key {
			v.Sorted = "asc"
			if cq.desc {
				v.Sorted = "desc"
			} else {
				sort = "-" + col.key
			}
		}
		q := url.Values{"sort": {sort}}
		if cq.q != "" {
			q.Set("q", cq.q)
		}
		sep := "?"
		if strings.Contains(here, "?") {
			sep = "&"
		}
		v.Href = here + sep + q.Encode()
		out[i] = v
	}
	return out
}

func clientRow(cl server.Client) views.ClientRow {
	tot := "—"
	if cl.TotMem >= 0 {
		tot = format.Bytes(cl.TotMem)
	}
	return views.ClientRow{ID: strconv.FormatInt(cl.ID, 10), Addr: cl.Addr, Name: cl.Name, User: cl.User,
		DB: strconv.Itoa(cl.DB), Age: format.Duration(cl.Age), Idle: format.Duration(cl.Idle), Cmd: cl.Cmd,
		QBuf: format.Bytes(cl.QBuf), OMem: format.Bytes(cl.OMem), TotMem: tot, Flags: cl.Flags, Own: cl.Own}
}
