package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/keydeck/keydeck/internal/live"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/limits"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/views"
	"github.com/keydeck/keydeck/views/format"
)

// LimitSweeps is what the Rate limits and Locks pages need of the
// per-connection sweeps (limits.Pool, built by the composition root): one
// sweeper per connection, held while a page or topic shows it.
type LimitSweeps interface {
	Acquire(conn *redisview.Conn) (*limits.Sweeper, func())
}

const (
	limitsKind = "limits"
	locksKind  = "locks"
)

// OpsTopic is a connection's live Rate limits or Locks page:
// "limits:NAME:q=FILTER&act=1", with "&fam=ID&db=N&off=K" when one
// family is shown from its K-th row on. Act: the fragment carries the
// action links, so only a role that may act watches it.
type OpsTopic struct {
	Kind   string // limitsKind or locksKind
	Conn   string
	Filter string
	Act    bool
	// Fam, DB, Off: the family shown from row Off on (0: every family
	// from its first row).
	Fam string
	DB  int
	Off int
}

func (t OpsTopic) String() string {
	q := t.rows().Values()
	if t.Act {
		q.Set("act", "1")
	}
	return t.Kind + ":" + t.Conn + ":" + q.Encode()
}

// rows is where the page stands in the rows.
func (t OpsTopic) rows() route.RowsPage {
	return route.RowsPage{Filter: t.Filter, Fam: t.Fam, DB: t.DB, Off: t.Off}
}

// pageURL links to the page of t's rows at p.
func (t OpsTopic) pageURL(p route.RowsPage) string {
	if t.Kind == locksKind {
		return p.URL(route.LocksURL(t.Conn))
	}
	return p.URL(route.LimitsURL(t.Conn))
}

func (t OpsTopic) Level() action.Level {
	if t.Act {
		return action.Support
	}
	return action.Viewer
}

func parseOpsTopic(kind string) func(arg string) (Topic, error) {
	return func(arg string) (Topic, error) {
		name, qs, _ := strings.Cut(arg, ":")
		if !redisview.ValidName(name) {
			return nil, ErrUnknownTopic
		}
		q, err := url.ParseQuery(qs)
		if err != nil {
			return nil, ErrUnknownTopic
		}
		p := route.ParseRowsPage(q)
		return OpsTopic{Kind: kind, Conn: name, Filter: p.Filter, Act: q.Get("act") == "1", Fam: p.Fam, DB: p.DB, Off: p.Off}, nil
	}
}

func (t OpsTopic) source(a *App) (func() live.Source, error) {
	conn, err := a.conns.Get(t.Conn)
	if err != nil {
		return nil, err
	}
	return func() live.Source {
		s, release := a.limits.Acquire(conn)
		// The page showed what the sweep held; the rows of the families it
		// was still reading come with the first round, not a poll later.
		ctx, cancel := context.WithCancel(a.ctx)
		select {
		case <-s.Read(): // read already: the first poll shows every family
		default:
			go func() {
				select {
				case <-s.Read():
					a.hub.Kick(t.String())
				case <-ctx.Done():
				}
			}()
		}
		return &opsSource{a: a, t: t, conn: conn, s: s, release: func() { cancel(); release() }}
	}, nil
}

type opsSource struct {
	a       *App
	t       OpsTopic
	conn    *redisview.Conn
	s       *limits.Sweeper
	release func()
}

func (s *opsSource) Poll(ctx context.Context) ([]byte, error) {
	s.conn.EnsurePack(s.a.conns.Packs())
	snap := s.s.Snapshot()
	now := s.a.now()
	if s.t.Kind == locksKind {
		vm := locksVM(s.conn, snap, s.t, now)
		return renderBytes(ctx, views.LocksLive(vm, true))
	}
	vm := limitsVM(s.conn, snap, s.t, now)
	return renderBytes(ctx, views.LimitsLive(vm, true))
}

func (s *opsSource) Close() error { s.release(); return nil }

// canAct: the viewer may start support actions from the rows.
func (a *App) canAct(c echo.Context) bool {
	if a.auth.ReadOnly || a.actions == nil {
		return false
	}
	act := actor(c)
	return a.actions.Allowed(act, action.KindResetLimit) || a.actions.Allowed(act, action.KindForceUnlock)
}

// opsPage resolves the connection and sweeper of a Rate limits or Locks
// page. It does not wait for the sweep: the page shows what the sweep
// holds now, says which families it is still reading, and its live
// topic brings the rest as the sweep finds it.
func (a *App) opsPage(c echo.Context, kind string) (*redisview.Conn, OpsTopic, limits.Snapshot, error) {
	conn, err := a.conns.Get(c.Param("conn"))
	if err != nil {
		return nil, OpsTopic{}, limits.Snapshot{}, err
	}
	conn.EnsurePack(a.conns.Packs())
	p := route.ParseRowsPage(c.QueryParams())
	t := OpsTopic{Kind: kind, Conn: conn.Name, Filter: strings.TrimSpace(p.Filter), Act: a.canAct(c), Fam: p.Fam, DB: p.DB, Off: p.Off}
	s, release := a.limits.Acquire(conn)
	defer release()
	return conn, t, s.Snapshot(), nil
}

func (a *App) limitsPage(c echo.Context) error {
	conn, t, snap, err := a.opsPage(c, limitsKind)
	if err != nil {
		return err
	}
	vm := limitsVM(conn, snap, t, a.now())
	return render(c, http.StatusOK, vm, views.LimitsPage(a.page(c, "Rate limits · "+conn.Name, conn.Name), vm))
}

// sweepLines says what the sweep has read and what it costs. Reading
// names the families of the page the sweep has not reached yet: their rows
// are not known, which is not the same as none.
func sweepLines(snap limits.Snapshot, st redisview.Status, class decode.Class) (status, reading, budget, disconnected string) {
	b := snap.Budget
	budget = "sweep budget " + format.Count(int64(b.KeysPerSec)) + " keys/s, SCAN COUNT " + format.Count(int64(b.Count)) +
		", kept rows re-read every " + format.Duration(b.Refresh)
	done, all := 0, 0
	var unread []string
	for _, f := range snap.Families {
		if f.Class != class {
			continue
		}
		all++
		if f.Passes > 0 {
			done++
		}
		if f.NotRead() {
			unread = append(unread, f.Family.ID+" (db"+strconv.Itoa(f.DB)+")")
		}
	}
	switch {
	case all == 0:
		status = ""
	case done == all:
		status = "Every family swept at least once; the sweep runs on"
	default:
		status = fmt.Sprintf("Still reading %d of %d families (first pass running): their rows arrive here as the sweep finds them",
			all-done, all)
	}
	if len(unread) > 0 {
		reading = fmt.Sprintf("Reading %s… not reached yet: %s", format.Plural(int64(len(unread)), "family", "families"), strings.Join(unread, ", "))
	}
	if !st.Up && !st.Checked.IsZero() {
		disconnected = "Redis is unreachable — " + statusText(st) + ". The rows below are as last read."
	}
	return status, reading, budget, disconnected
}

// keptLabel says which rows of a family are shown.
func keptLabel(f limits.FamilySnap, keep int) string {
	k := f.Kept(keep)
	switch {
	case k.Running:
		return fmt.Sprintf("%s found so far (first pass running)", format.Plural(k.Found, "key", "keys"))
	case k.Cut:
		return fmt.Sprintf("the %d most constrained of ~%s keys", len(f.Rows), format.Count(k.Of))
	}
	return format.Plural(k.Of, "key", "keys")
}

// pageRows is how many rows of one family a page shows; page links walk
// the rest of the kept rows (Budget.Keep), most constrained first.
const pageRows = 10

// pageOf cuts a family's sorted rows to the page t stands on: from t.Off
// when t names this family, else from the first row. An offset past the
// rows (they went meanwhile) shows the last page.
func pageOf[R any](t OpsTopic, fam string, db int, rows []R) ([]R, views.Pager) {
	n := len(rows)
	off := 0
	if t.Fam == fam && t.DB == db {
		off = t.Off
	}
	if off >= n {
		off = max(0, (n-1)/pageRows*pageRows)
	}
	if off == 0 && n <= pageRows {
		return rows, views.Pager{}
	}
	end := min(n, off+pageRows)
	p := views.Pager{Text: fmt.Sprintf("rows %d–%d of %d, most constrained first", off+1, end, n)}
	at := route.RowsPage{Filter: t.Filter, Fam: fam, DB: db}
	if off > 0 {
		at.Off = max(0, off-pageRows)
		p.Prev = t.pageURL(at)
	}
	if end < n {
		at.Off = end
		p.Next = t.pageURL(at)
	}
	return rows[off:end], p
}

func subject(vars []schema.Var) []views.Placeholder {
	out := make([]views.Placeholder, 0, len(vars))
	for _, v := range vars {
		out = append(out, views.Placeholder{Name: v.Name, Value: v.Value})
	}
	return out
}

func previewLink(title, kind, conn string, db int, key string) views.ActionLink {
	if !views.Linkable(key) {
		return views.ActionLink{}
	}
	return views.ActionLink{Title: title, Href: route.Action{Kind: kind, Conn: conn, DB: db, Key: key}.PreviewURL()}
}

func appendLink(list []views.ActionLink, l views.ActionLink) []views.ActionLink {
	if l.Href == "" {
		return list
	}
	return append(list, l)
}

// limitText is the pack's limit of a family, in words: its role's
// presenter says it.
func limitText(f *schema.Family) string {
	if p, ok := presenterFor(limitPresenters, f); ok && p.limit != nil {
		return p.limit(f)
	}
	return ""
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func limitsVM(conn *redisview.Conn, snap limits.Snapshot, t OpsTopic, now time.Time) views.LimitsVM {
	vm := views.LimitsVM{Conn: conn.Name, Filter: views.ValidText(t.Filter), FormAction: route.LimitsURL(conn.Name),
		WSURL: route.LiveURL(t.String()), Err: snap.Err}
	vm.Status, vm.Reading, vm.Budget, vm.Disconnected = sweepLines(snap, conn.Status(), decode.ClassLimit)
	pc := conn.PackChoice()
	switch {
	case pc.Pack != nil:
		vm.Pack = pc.Pack.Name
	case pc.Why == "":
		vm.Empty = "Not known yet: matching the connection to a pack…"
		return vm
	default:
		vm.Empty = "No schema pack explains this connection's keys (" + pc.Why + "), so no key is known to be a rate limit."
		return vm
	}
	switch {
	case !hasClass(pc.Pack, decode.ClassLimit):
		vm.Empty = "No rate-limit family in this pack (" + pc.Pack.Name + "): no family of role " + roleList(limitPresenters) + " with a limit."
		return vm
	case snap.Pack != pc.Pack:
		vm.Status, vm.Reading = "", startingLine(pc.Pack, decode.ClassLimit)
		return vm
	}
	for _, f := range limits.RankLimits(snap, t.Filter, now) {
		g := views.LimitGroup{Family: f.Family.ID, Title: f.Family.Name(), Domain: f.Family.Domain, Role: string(f.Family.Role), DB: f.DB,
			Limit: limitText(f.Family), Label: keptLabel(f.FamilySnap, snap.Budget.Keep)}
		for _, rs := range f.Shown {
			g.Rows = append(g.Rows, limitRow(conn.Name, rs.Row, rs.State, t.Act))
		}
		switch {
		case f.Hidden > 0 && len(g.Rows) == 0:
			g.Note = fmt.Sprintf("None of the %d rows kept matches %q.", f.Hidden, t.Filter)
		case f.Hidden > 0:
			g.Note = fmt.Sprintf("%s not match %q.", format.Plural(int64(f.Hidden), "row kept does", "rows kept do"), t.Filter)
		case len(g.Rows) == 0 && f.Total == 0:
			g.Note = "No key of this family in db" + strconv.Itoa(f.DB) + "."
		}
		g.Rows, g.Pager = pageOf(t, g.Family, g.DB, g.Rows)
		vm.Groups = append(vm.Groups, g)
		if f.Throttled > 0 {
			vm.Summary = append(vm.Summary, views.SummaryChip{Family: f.Family.Name(), Text: format.Plural(int64(f.Throttled), "row", "rows"), Anchor: route.FamilyAnchor(f.Family.ID, f.DB)})
		}
	}
	slices.SortFunc(vm.Summary, func(a, b views.SummaryChip) int { return strings.Compare(a.Anchor, b.Anchor) })
	if len(vm.Groups) == 0 && t.Filter != "" {
		vm.Empty = fmt.Sprintf("No rate-limit row kept matches %q.", t.Filter)
	}
	return vm
}

// startingLine says the sweep has not taken the connection's pack up yet
// (it starts with the page): every family of the class is still unread.
func startingLine(p *schema.Pack, class decode.Class) string {
	n := 0
	for _, f := range p.Families {
		if decode.ClassOf(f) == class {
			n++
		}
	}
	return fmt.Sprintf("Reading %s of pack %s… the sweep is starting: rows arrive here as it finds them",
		format.Plural(int64(n), "family", "families"), p.Name)
}

// hasClass: the connection's pack has a family of class c. It asks the
// pack, not the sweep: before the sweep has taken the pack up its
// snapshot has none (or an older one), which is not "no such family".
func hasClass(p *schema.Pack, c decode.Class) bool {
	if p == nil {
		return false
	}
	for _, f := range p.Families {
		if decode.ClassOf(f) == c {
			return true
		}
	}
	return false
}

// usedLeft is a counted limit's level: its bar shows what is left, so
// the words say both.
func usedLeft(used, limit int64, within string) string {
	return fmt.Sprintf("%d of %d used%s · %d left", used, limit, within, max(0, limit-used))
}

func limitRow(conn string, r *limits.Row, st limits.State, act bool) views.LimitRow {
	row := views.LimitRow{Key: r.Key, Href: keyHref(conn, r.DB, r.Key), Subject: subject(r.Vars), Err: r.Err,
		Left: views.LeftPct(st.Limit-st.Used, st.Limit), Throttled: st.Throttled, Locked: st.Locked}
	if r.Err != "" {
		row.Err = "not readable as its role says: " + r.Err
		return row
	}
	if p, ok := presenterFor(limitPresenters, r.Family); ok && p.level != nil {
		row.Level = p.level(r.Family, st)
	}
	switch {
	case st.Locked && !st.Until.IsZero():
		row.State = "locked until " + format.Clock(st.Until)
	case st.Locked:
		row.State = "locked"
	case st.Throttled:
		row.State = "throttled"
	case views.NearEmpty(row.Left):
		row.State = "near the limit"
	default:
		row.State = "ok"
	}
	if st.ResetsIn > 0 {
		row.Resets = format.Duration(st.ResetsIn)
	}
	if !act {
		return row
	}
	fix := action.Fix(r.Family, action.FixState{Locked: st.Locked, Idle: st.Used <= 0 && !st.Throttled})
	row.Actions = appendFix(row.Actions, fix, conn, r.DB, r.Key)
	return row
}
