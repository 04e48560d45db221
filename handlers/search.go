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

	"github.com/labstack/echo/v4"

	"github.com/keydeck/keydeck/internal/live"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/redisview/scanbudget"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/redisview/search"
	"github.com/keydeck/keydeck/views"
	"github.com/keydeck/keydeck/views/format"
)

// searchLimits bound one search request (tests shrink them).
var searchLimits = search.DefaultLimits

// searchPage searches a connection's keys across its databases (?q=, and
// ?cont= to continue the scans). The header box of pages without a
// connection sends ?conn= to choose one: that is a redirect.
func (a *App) searchPage(c echo.Context) error {
	conn, err := a.conns.Get(c.Param("conn"))
	if err != nil {
		return err
	}
	qp := c.QueryParams()
	q := qp.Get("q")
	if len(q) > search.MaxQuery {
		return fmt.Errorf("%w: the search is %s long; at most %s", route.ErrParam, format.ByteCount(int64(len(q))), format.ByteCount(search.MaxQuery))
	}
	if other := qp.Get("conn"); other != "" && other != conn.Name {
		if _, err := a.conns.Get(other); err != nil {
			return err
		}
		return c.Redirect(http.StatusSeeOther, route.SearchURL(other, q))
	}
	cursors, err := search.ParseCursors(qp.Get("cont"))
	if err != nil {
		return fmt.Errorf("%w: %s", route.ErrParam, err.Error())
	}
	query := search.Parse(q, conn.Pack())
	vm := views.SearchVM{Conn: conn.Name, Action: route.SearchPath(conn.Name), Q: q, Kind: string(query.Kind)}
	if p := conn.Pack(); p != nil {
		vm.Pack = p.Name
	}
	if query.Kind == search.Value && (query.Name == "" || search.KindOf(query.Name) == "user") && search.ValueKinds(query.Value)[0] == "user" {
		vm.UserURL, vm.UserName = route.UserURL(conn.Name, query.Value), query.Value // looks like a username: its own page
	}
	page := a.page(c, "Search "+conn.Name, conn.Name)
	if query.Kind == search.Empty {
		vm.Reading = "Type what to search for."
		return render(c, http.StatusOK, vm, views.SearchPage(page, vm))
	}
	if query.Kind == search.Value && vm.Pack == "" {
		vm.Reading = "Searched as a value, but " + conn.Name + " has no schema pack (not chosen yet or none fits), so no key can be derived from it."
		vm.Notes = append(vm.Notes, "Search with a glob pattern instead, e.g. *"+schema.EscapeGlob(views.ValidText(q))+"*.")
		return render(c, http.StatusOK, vm, views.SearchPage(page, vm))
	}
	// A first request of a page checks the derived keys only, and the
	// page's live topic runs the scans; JSON and continue requests run one
	// bounded request of scans.
	lim := searchLimits
	lim.Budget = a.scanTap(conn.Name, identity(c).Holder())
	live := cursors == nil && !wantsJSON(c.Request()) && (query.Kind == search.Glob || query.Kind == search.Value)
	if live {
		lim.Calls = 0
	}
	res, err := search.Run(c.Request().Context(), conn, query, cursors, lim)
	if err != nil {
		if !errors.Is(err, redisview.ErrRead) {
			return err
		}
		vm.Error = "Nothing could be searched: " + err.Error()
		if st := conn.Status(); !st.Up && !st.Checked.IsZero() {
			vm.Error = conn.Name + " is " + statusText(st) + ". " + vm.Error
		}
		vm.Reading = reading(query, res, vm.Pack)
		return render(c, http.StatusBadGateway, vm, views.SearchPage(page, vm))
	}
	searchVM(&vm, conn.Name, query, res)
	if live && len(res.Scans) > 0 && !res.Capped {
		vm.WSURL = route.LiveURL(SearchTopic{Conn: conn.Name, Q: q}.String())
		vm.LiveState = "waiting"
		vm.LiveText = "The scans start in the background as soon as the page is open, their progress and finds shown here live. Without JavaScript, continue the scans by hand."
		for i := range vm.Scans {
			vm.Scans[i].Progress = fmt.Sprintf("about %s keys to scan; not started yet.", format.Count(res.Scans[i].DBKeys))
		}
	}
	return render(c, http.StatusOK, vm, views.SearchPage(page, vm))
}

// reading says how the query was read, in words.
func reading(q search.Query, r search.Result, pack string) string {
	switch q.Kind {
	case search.Glob:
		return fmt.Sprintf("A glob pattern: SCAN MATCH in each of the %s with keys.", format.Plural(int64(len(r.Keyspace)), "database", "databases"))
	case search.Family:
		return "The id of a family of the " + pack + " pack: its key lists."
	}
	what := "A value"
	if q.Name != "" {
		what = "A value of the placeholders named {" + q.Name + "}"
	}
	scans := 0
	for _, s := range r.Scans {
		// A family comes once per encoding of the value (base64).
		for i, f := range s.Families {
			if !slices.Contains(s.Families[:i], f) {
				scans++
			}
		}
	}
	s := fmt.Sprintf("%s, read against the %s pack: %s derived from it and checked", what, pack, format.Plural(int64(r.Checked), "exact key", "exact keys"))
	if r.Continued {
		s = fmt.Sprintf("%s, read against the %s pack: continuing the scans (the exact keys were checked on the first page)", what, pack)
	}
	s += fmt.Sprintf("; %s searched by scan, the value filled in", format.Plural(int64(scans), "family's keys", "families' keys"))
	if r.Skipped > 0 {
		s += fmt.Sprintf("; %s skipped (the value cannot fill their placeholders)", format.Plural(int64(r.Skipped), "family", "families"))
	}
	return s + "."
}

// searchVM converts a result into the page's model.
func searchVM(vm *views.SearchVM, conn string, q search.Query, r search.Result) {
	vm.Reading = reading(q, r, vm.Pack)
	vm.Commands = r.Commands
	if f := q.Family; f != nil {
		fv := &views.SearchFamilyVM{ID: f.ID, Pattern: f.Pattern.String(), Role: string(f.Role), Domain: f.Domain,
			Description: f.Description, Sensitive: f.Sensitive}
		for _, db := range r.FamilyDBs {
			l := views.SearchListVM{DB: db, Href: route.FamilyKeysURL(conn, db, f.ID)}
			if n, ok := r.Keyspace[db]; ok {
				l.Keys = format.Count(n)
			}
			fv.Lists = append(fv.Lists, l)
		}
		vm.Family = fv
		return
	}
	vm.Found = len(r.Hits)
	for _, h := range r.Hits {
		if len(vm.DBs) == 0 || vm.DBs[len(vm.DBs)-1].DB != h.DB {
			vm.DBs = append(vm.DBs, views.SearchDBVM{DB: h.DB, Href: route.DatabaseURL(conn, h.DB)})
		}
		d := &vm.DBs[len(vm.DBs)-1]
		id, role, domain, sensitive, href := "", "—", "", false, ""
		if h.Family != nil {
			id, role, domain, sensitive = h.Family.ID, string(h.Family.Role), h.Family.Domain, h.Family.Sensitive
			href = route.FamilyKeysURL(conn, h.DB, id)
		}
		if len(d.Families) == 0 || d.Families[len(d.Families)-1].Family != id {
			d.Families = append(d.Families, views.SearchGroupVM{Family: id, Role: role, Domain: domain, Sensitive: sensitive, Href: href})
		}
		g := &d.Families[len(d.Families)-1]
		k := views.SearchKeyVM{Key: h.Key, Type: h.Type, TTL: "none", How: "derived"}
		if views.Linkable(h.Key) {
			k.Href = route.KeyURL(conn, h.DB, h.Key)
		}
		if h.TTL >= 0 {
			k.TTL = format.TTL(h.TTL)
		}
		if h.Scan {
			k.How = "scan"
		}
		g.Keys = append(g.Keys, k)
	}
	lim := searchLimits
	for _, s := range r.Scans {
		vm.Scans = append(vm.Scans, views.SearchScanVM{DB: s.DB, Match: s.Match, Progress: progress(s, lim), Done: s.Done})
	}
	if r.Capped {
		note := fmt.Sprintf("Stopped at the cap of %d keys; refine the search or continue.", lim.Cap)
		if r.Dropped > 0 {
			note = fmt.Sprintf("Stopped at the cap of %d keys. The last SCAN call returned %s more, not listed here and not returned by a continue: refine the search to see them.", lim.Cap, format.Plural(int64(r.Dropped), "matching key", "matching keys"))
		}
		vm.Notes = append(vm.Notes, note)
	}
	if r.TimedOut {
		vm.Notes = append(vm.Notes, fmt.Sprintf("Stopped after the %s a request may scan; continue for the rest.", format.Duration(lim.Time)))
	}
	if r.Waiting {
		vm.Notes = append(vm.Notes, fmt.Sprintf("Stopped waiting for scan budget (the scans people start on %s share a budget of keys per second) after %s; continue for the rest.", conn, format.Duration(lim.Time)))
	}
	if r.Absent > 0 {
		vm.Notes = append(vm.Notes, format.Plural(int64(r.Absent), "family the value fits lives", "families the value fits live")+" in no database that has keys now: not searched.")
	}
	if cur := r.Cursors(); cur != "" {
		vm.ContinueURL = route.SearchContinueURL(conn, q.Raw, cur)
	}
}

// progress says how far a scan got.
func progress(s search.ScanState, lim search.Limits) string {
	found := format.Plural(int64(s.Found), "key", "keys")
	switch {
	case s.Earlier:
		return "finished on an earlier page."
	case !s.Started:
		return "not searched on this page (the search stopped first); continue to search it."
	case s.Done:
		return fmt.Sprintf("scanned to the end of the database's %s keys in %s; found %s.", format.Count(s.DBKeys), format.Plural(int64(s.Calls), "SCAN call", "SCAN calls"), found)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "stopped after scanning about %s of ~%s keys (%s of COUNT %s); found %s. Refine the pattern or continue.",
		format.Count(s.Examined), format.Count(s.DBKeys), format.Plural(int64(s.Calls), "SCAN call", "SCAN calls"), strconv.FormatInt(lim.Count, 10), found)
	return b.String()
}

const searchKind = "search"

// SearchTopic is a search page's live results, "search:conn=C&q=Q": its
// source runs the search's scans slice by slice (search.LiveLimits), so
// everyone watching the same search shares one scan.
type SearchTopic struct {
	Conn string
	Q    string
}

func (t SearchTopic) String() string {
	return searchKind + ":" + url.Values{"conn": {t.Conn}, "q": {t.Q}}.Encode()
}

// Level: the fragment carries no controls.
func (SearchTopic) Level() action.Level { return action.Viewer }

func parseSearchTopic(arg string) (Topic, error) {
	q, err := url.ParseQuery(arg)
	if err != nil {
		return nil, err
	}
	t := SearchTopic{Conn: q.Get("conn"), Q: q.Get("q")}
	if !redisview.ValidName(t.Conn) || strings.TrimSpace(t.Q) == "" || len(t.Q) > search.MaxQuery || t.String() != searchKind+":"+arg {
		return nil, ErrUnknownTopic // one name per search: one poller per view
	}
	return t, nil
}

// searchLive bounds a live search (tests shrink them).
var searchLive = search.LiveLimits

func (t SearchTopic) source(a *App) (func() live.Source, error) { return t.scanSource(a, "") }

// scanSource: the search scans as who, the identity that started it.
func (t SearchTopic) scanSource(a *App, who string) (func() live.Source, error) {
	conn, err := a.conns.Get(t.Conn)
	if err != nil {
		return nil, err
	}
	return func() live.Source {
		s := &searchSource{a: a, conn: conn, t: t, lim: searchLive, who: who, pacer: a.scanPacer(conn.Name, who)}
		if s.pacer != nil {
			s.lim.Budget = s.pacer
		}
		return s
	}, nil
}

// searchSource steps one search session a tick (and kicks itself while
// scans remain, so a big server is scanned in seconds, not a slice a
// second); once the session is done it sends its last fragment again
// without reading Redis.
type searchSource struct {
	a    *App
	conn *redisview.Conn
	t    SearchTopic
	lim  search.Limits
	who  string // whose scan budget it draws from
	// pacer is the search's place in the budget's queue, kept between
	// polls; nil: no budget.
	pacer *scanbudget.Pacer
	sess  *search.Session
	last  []byte // the fragment once the session is done
}

// Close gives up the search's place in the budget's queue: the hub closes
// a source when its last viewer leaves.
func (s *searchSource) Close() error {
	s.pacer.Close()
	return nil
}

func (s *searchSource) Poll(ctx context.Context) ([]byte, error) {
	if s.last != nil {
		return s.last, nil
	}
	q := search.Parse(s.t.Q, s.conn.Pack())
	vm := views.SearchVM{Conn: s.conn.Name, Q: s.t.Q, Kind: string(q.Kind)}
	if p := s.conn.Pack(); p != nil {
		vm.Pack = p.Name
	}
	if q.Kind == search.Value && vm.Pack == "" {
		vm.LiveState, vm.LiveText = "waiting", "Not known yet which families a value fills: "+s.conn.Name+" has no schema pack yet."
		return renderBytes(ctx, views.SearchResults(vm, true))
	}
	if s.sess == nil {
		s.sess = search.NewSession(s.conn, q, s.lim)
	}
	res, err := s.sess.Step(ctx)
	searchLiveVM(&vm, s.conn.Name, q, res, s.lim, s.sess.Done(), err)
	if vm.LiveState == "budget-wait" {
		vm.LiveText = s.a.budgetWait(s.conn.Name, s.who) + " " + vm.LiveText
	}
	if s.sess.Done() && err == nil {
		// The last frame is sent again to later viewers as it is: say when.
		vm.LiveText += " As of " + format.Clock(s.a.now()) + "; search again for a fresh read."
	}
	if err != nil && res.Keyspace == nil {
		vm.DBs, vm.Scans = nil, nil // nothing read yet: nothing claimed
	}
	b, rerr := renderBytes(ctx, views.SearchResults(vm, true))
	if rerr != nil {
		return nil, rerr
	}
	if s.sess.Done() && err == nil {
		s.last = b
	} else if err == nil {
		s.a.hub.Kick(s.t.String())
	}
	return b, nil
}

// searchLiveVM is the live fragment's model: what was found so far, each
// scan's progress and where the search stands.
func searchLiveVM(vm *views.SearchVM, conn string, q search.Query, r search.Result, lim search.Limits, done bool, err error) {
	searchVM(vm, conn, q, r)
	vm.Notes, vm.ContinueURL = nil, ""
	if r.Absent > 0 {
		vm.Notes = append(vm.Notes, format.Plural(int64(r.Absent), "family the value fits lives", "families the value fits live")+" in no database that has keys now: not searched.")
	}
	for i, st := range r.Scans {
		vm.Scans[i].Progress = liveProgress(st, done)
	}
	found := format.Plural(int64(len(r.Hits)), "key", "keys")
	scanned := format.Count(r.Scanned)
	switch {
	case err != nil:
		vm.LiveState = "error"
		vm.LiveText = fmt.Sprintf("The scan could not go on: %s. It tries again at the next tick; %s found so far.", err.Error(), found)
	case r.Capped:
		vm.LiveState = "cap"
		vm.LiveText = fmt.Sprintf("Stopped at the cap of %d keys found (after about %s keys scanned): refine the search to see the rest.", lim.Cap, scanned)
		if r.Dropped > 0 {
			vm.LiveText += fmt.Sprintf(" The last SCAN call returned %s more, not listed.", format.Plural(int64(r.Dropped), "matching key", "matching keys"))
		}
	case r.Budget:
		vm.LiveState = "budget"
		vm.LiveText = fmt.Sprintf("Stopped after scanning about %s keys, the budget of a live search; %s found. Refine the search, or continue the scans by hand.", scanned, found)
		if cur := r.Cursors(); cur != "" {
			vm.ContinueURL = route.SearchContinueURL(conn, q.Raw, cur)
		}
	case done:
		vm.LiveState = "end"
		vm.LiveText = fmt.Sprintf("Done: every scan reached the end of its database (about %s keys scanned); %s found.", scanned, found)
		if len(r.Scans) == 0 {
			vm.LiveText = fmt.Sprintf("Done: nothing to scan; %s found.", found)
		}
	case r.Waiting:
		vm.LiveState = "budget-wait"
		vm.LiveText = fmt.Sprintf("About %s keys scanned so far, %s found; the scan goes on when its turn comes.", scanned, found)
	default:
		vm.LiveState = "scanning"
		vm.LiveText = fmt.Sprintf("Scanning in the background: about %s keys scanned so far, %s found; the list grows as keys are found. Everyone watching this search shares one scan.", scanned, found)
	}
}

// liveProgress says how far one scan of a live search got.
func liveProgress(s search.ScanState, done bool) string {
	found := strconv.Itoa(s.Found) + " found"
	switch {
	case s.Done:
		return fmt.Sprintf("scanned to the end (~%s keys, %s); %s.", format.Count(s.DBKeys), format.Plural(int64(s.Calls), "SCAN call", "SCAN calls"), found)
	case s.Calls == 0 && done:
		return "not scanned (the search stopped first)."
	case s.Calls == 0:
		return fmt.Sprintf("about %s keys to scan; not started yet.", format.Count(s.DBKeys))
	case done:
		return fmt.Sprintf("stopped after %s of ~%s keys scanned; %s.", format.Count(s.Examined), format.Count(s.DBKeys), found)
	}
	return fmt.Sprintf("%s of ~%s keys scanned, %s; scanning…", format.Count(s.Examined), format.Count(s.DBKeys), found)
}
