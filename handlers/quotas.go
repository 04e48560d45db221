package handlers

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/keydeck/keydeck/internal/live"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/redisview/quotas"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/views"
	"github.com/keydeck/keydeck/views/format"
)

// QuotaWalkers is what the quotas pages need of the per-connection walks
// (quotas.Walkers): one walker per connection, held while a page or topic
// shows it.
type QuotaWalkers interface {
	Acquire(conn *redisview.Conn) (*quotas.Walker, func())
}

// quotasPage shows every quota, balance, reservation, concurrency set and
// breaker hint of a connection, most used first; the websocket keeps it
// live.
func (a *App) quotasPage(c echo.Context) error {
	conn, err := a.conns.Get(c.Param("conn"))
	if err != nil {
		return err
	}
	w, release := a.quotaWalkers.Acquire(conn)
	defer release()
	if st := conn.Status(); st.Up || st.Checked.IsZero() {
		w.WaitRead(c.Request().Context(), firstRead)
	}
	vm := quotasVM(conn, w.Snapshot(), a.canRelease(c, conn))
	return render(c, http.StatusOK, vm, views.QuotasPage(a.page(c, "Quotas · "+conn.Name, conn.Name), vm))
}

const quotasKind = "quotas"

// QuotasTopic is a connection's quotas and budgets: "quotas:NAME", or
// "quotas:NAME:act" with the admin's release links (admins only).
type QuotasTopic struct {
	Conn string
	Act  bool
}

func (t QuotasTopic) String() string {
	if t.Act {
		return quotasKind + ":" + t.Conn + ":act"
	}
	return quotasKind + ":" + t.Conn
}

func (t QuotasTopic) Level() action.Level {
	if t.Act {
		return action.Admin
	}
	return action.Viewer
}

func parseQuotasTopic(arg string) (Topic, error) {
	name, rest, cut := strings.Cut(arg, ":")
	if !redisview.ValidName(name) || (cut && rest != "act") {
		return nil, ErrUnknownTopic
	}
	return QuotasTopic{Conn: name, Act: cut}, nil
}

// canRelease: the viewer may release orphaned reservations from the rows.
// Only where the connection's pack has reservations the action applies to.
func (a *App) canRelease(c echo.Context, conn *redisview.Conn) bool {
	if a.auth.ReadOnly || a.actions == nil || !a.actions.Allowed(actor(c), action.KindReleaseReservation) {
		return false
	}
	if p := conn.Pack(); p != nil {
		for _, f := range p.Families {
			if (action.ReleaseReservation{}).AppliesTo(f) {
				return true
			}
		}
	}
	return false
}

// source renders the walker's snapshot: the one walk of the connection
// serves every viewer, the poller only renders.
func (t QuotasTopic) source(a *App) (func() live.Source, error) {
	conn, err := a.conns.Get(t.Conn)
	if err != nil {
		return nil, err
	}
	return func() live.Source {
		w, release := a.quotaWalkers.Acquire(conn)
		return &walkerSource{release: release, poll: func(ctx context.Context) ([]byte, error) {
			return renderBytes(ctx, views.QuotasLive(quotasVM(conn, w.Snapshot(), t.Act), true))
		}}
	}, nil
}

// walkerSource renders from a held walker and lets it go on Close.
type walkerSource struct {
	poll    func(ctx context.Context) ([]byte, error)
	release func()
}

func (s *walkerSource) Poll(ctx context.Context) ([]byte, error) { return s.poll(ctx) }
func (s *walkerSource) Close() error                             { s.release(); return nil }

// quotasVM turns a walk's snapshot into the page's view model.
// act: the viewer is an admin, offered the release of orphaned
// reservations.
func quotasVM(conn *redisview.Conn, s quotas.Snapshot, act bool) views.QuotasVM {
	vm := views.QuotasVM{Conn: conn.Name, WSURL: route.LiveURL(QuotasTopic{Conn: conn.Name, Act: act}.String())}
	st := conn.Status()
	if !st.Up && !st.Checked.IsZero() {
		vm.Disconnected = "Redis is unreachable — " + statusText(st) + "."
		if s.Read.IsZero() {
			vm.Disconnected += " Nothing has been read, so nothing is known about its quotas."
		} else {
			vm.Disconnected += " The rows below were read at " + format.Clock(s.Read) + "."
		}
	}
	if s.Err != nil {
		vm.Err = "The last read failed: " + conn.SafeErr(s.Err)
	}
	pack := conn.Pack()
	if pack == nil {
		vm.Empty = "No schema pack matches this connection, so no key is known to be a quota or a budget."
		return vm
	}
	shown := false
	for _, f := range pack.Families {
		shown = shown || quotas.Shown(f)
	}
	if !shown {
		vm.Empty = "The " + pack.Name + " pack has no quota, balance, reservation, concurrency-set, breaker-hint or single-key config family."
		return vm
	}
	subject, _ := quotas.SubjectOf(pack)
	switch {
	case !s.Started:
		vm.Status = "Not known yet: the walk has not read anything."
	case s.Pass == 0:
		vm.Status = "First walk running: " + format.Plural(s.Seen, "key", "keys") + " read so far; rows are the most used found yet (" + s.Budget.String() + ")."
	default:
		vm.Status = "Rows re-read every second; the most used keys of each family from the walk completed at " + format.Clock(s.CompletedAt) +
			" and the one running (" + s.Budget.String() + ")."
	}
	for _, fr := range s.Families {
		f := fr.Family
		fv := views.QuotaFamilyVM{ID: f.ID, Role: string(f.Role), Domain: f.Domain, Pattern: f.Pattern.String(), DB: fr.DB,
			Keys: format.Count(fr.Keys), Limit: familyLimit(f)}
		switch {
		case fr.Cut:
			fv.Label = "Top " + strconv.Itoa(len(fr.Rows)) + " of " + format.Plural(fr.Keys, "key", "keys") + ", " + rankWords(f.Role)
		default:
			fv.Label = format.Plural(fr.Keys, "key", "keys") + ", " + rankWords(f.Role)
		}
		for _, r := range fr.Rows {
			rv := quotaRowVM(conn.Name, subject, r)
			if act && r.Orphaned {
				rv.Actions = appendLink(rv.Actions, previewLink(action.ReleaseReservation{}.Title(), action.KindReleaseReservation, conn.Name, r.DB, r.Key))
			}
			fv.Rows = append(fv.Rows, rv)
		}
		vm.Families = append(vm.Families, fv)
	}
	for _, r := range s.Configs {
		vm.Configs = append(vm.Configs, quotaRowVM(conn.Name, subject, r))
	}
	if s.Started && len(vm.Families) == 0 && len(vm.Configs) == 0 {
		if s.Pass > 0 {
			vm.Empty = "No key of these families exists (walk completed at " + format.Clock(s.CompletedAt) + ")."
		} else {
			vm.Empty = "No key of these families found yet: the first walk is running."
		}
	}
	return vm
}

// quotaPresenter is what a budget role shows on the Quotas page; each
// role's present_<role>.go registers one (a role without one, a config,
// shows its value).
type quotaPresenter struct {
	order string                        // how its rows are ordered
	limit func(f *schema.Family) string // what its rows are measured against; nil: nothing
	row   func(v *views.QuotaRowVM, r quotas.Row)
}

var quotaPresenters = map[schema.Role]quotaPresenter{}

// familyLimit says what a family's rows are measured against.
func familyLimit(f *schema.Family) string {
	if p := quotaPresenters[f.Role]; p.limit != nil {
		return p.limit(f)
	}
	return ""
}

func rankWords(r schema.Role) string { return quotaPresenters[r].order }

// quotaRowVM shows one row; the subject's id (the placeholder the pack's
// API key families share) links to its gateway key page.
func quotaRowVM(conn string, subject quotas.Subject, r quotas.Row) views.QuotaRowVM {
	v := views.QuotaRowVM{Key: r.Key, Href: keyHref(conn, r.DB, r.Key), TTL: format.TTL(r.TTL), Note: r.Note}
	if subject.Name != "" {
		if id := r.Var(subject.Name); id != "" && route.Linkable(id) {
			v.Subject, v.SubjectHref = id, route.GatewayKeyURL(conn, id)
		}
	}
	if r.Note != "" {
		return v
	}
	if p, ok := quotaPresenters[r.Family.Role]; ok {
		p.row(&v, r)
	} else {
		v.Amount = views.EscapeName(r.Amount)
	}
	if viol := format.TTLViolation(r.Family.TTL.Violation(r.TTL)); viol != "" && !r.NoTTL {
		v.Flags = append(v.Flags, viol)
	}
	return v
}

// usedRow shows a budget used against a limit (a quota, a concurrency set).
func usedRow(v *views.QuotaRowVM, r quotas.Row) {
	v.Used = format.Count(r.Used) + unitSuffix(r.Unit)
	if r.Limit <= 0 {
		return
	}
	v.Limit = format.Count(r.Limit)
	v.Percent = strconv.FormatFloat(r.Percent, 'f', 1, 64) + "%"
	v.Left = views.LeftPct(float64(r.Limit-r.Used), float64(r.Limit))
	switch {
	case r.Percent >= 100:
		v.Level = "full"
	case r.Percent >= 80:
		v.Level = "warn"
	default:
		v.Level = "ok"
	}
}
