package handlers

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/keydeck/keydeck/internal/apiv1"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/redisview/bans"
	"github.com/keydeck/keydeck/redisview/stats"
)

// The API's operations of the ops pages (Rate limits, Locks, Quotas,
// Bans): each reads what its page reads and maps it with internal/apiv1.

type apiRowsIn struct {
	Conn   string `path:"conn" doc:"The connection's name."`
	Filter string `query:"q" doc:"Keep the rows whose placeholder values contain this text (\"\": every row)."`
}

type apiLimitsOut struct{ Body apiv1.LimitsPage }

// apiLimits answers what the Rate limits page shows: the connection's
// sweep as it holds it now (it does not wait for the sweep).
func (a *App) apiLimits(_ context.Context, c echo.Context, in *apiRowsIn) (*apiLimitsOut, error) {
	conn, t, snap, err := a.opsPage(c, limitsKind)
	if err != nil {
		return nil, err
	}
	return &apiLimitsOut{Body: apiv1.Limits(conn.Name, conn.PackChoice(), conn.Status(), snap, t.Filter, a.now(), a.apiOffer(c))}, nil
}

type apiLocksOut struct{ Body apiv1.LocksPage }

// apiLocks answers what the Locks page shows.
func (a *App) apiLocks(_ context.Context, c echo.Context, in *apiRowsIn) (*apiLocksOut, error) {
	conn, t, snap, err := a.opsPage(c, locksKind)
	if err != nil {
		return nil, err
	}
	return &apiLocksOut{Body: apiv1.Locks(conn.Name, conn.PackChoice(), conn.Status(), snap, t.Filter, a.now(), a.apiOffer(c))}, nil
}

// apiOffer offers a row's fixing action as the pages' rows link it: to
// a caller who may act (canAct) and whose role may run the kind.
func (a *App) apiOffer(c echo.Context) apiv1.Offer {
	if !a.canAct(c) {
		return nil
	}
	act := actor(c)
	return func(kind string) (apiv1.KeyAction, bool) {
		if k, ok := a.actionKind(kind); ok && a.actions.Allowed(act, kind) {
			return apiKeyAction(k), true
		}
		return apiv1.KeyAction{}, false
	}
}

// actionKind is the registered kind of that name.
func (a *App) actionKind(name string) (action.Kind, bool) {
	if a.actions == nil {
		return nil, false
	}
	for _, k := range a.actions.Kinds() {
		if k.Name() == name {
			return k, true
		}
	}
	return nil, false
}

type apiConnIn struct {
	Conn string `path:"conn" doc:"The connection's name."`
}

type apiQuotasOut struct{ Body apiv1.QuotasPage }

// apiQuotas answers what the Quotas page shows: the connection's quota
// walker, waited for its first read as the page waits.
func (a *App) apiQuotas(ctx context.Context, c echo.Context, in *apiConnIn) (*apiQuotasOut, error) {
	conn, err := a.conns.Get(in.Conn)
	if err != nil {
		return nil, err
	}
	w, release := a.quotaWalkers.Acquire(conn)
	defer release()
	if st := conn.Status(); st.Up || st.Checked.IsZero() {
		w.WaitRead(ctx, firstRead)
	}
	out := &apiQuotasOut{Body: apiv1.Quotas(conn.Name, conn.PackChoice(), conn.Status(), w.Snapshot(), a.apiErrText(conn))}
	// An orphaned reservation offers its release, as the page's row does.
	if a.canRelease(c, conn) {
		if k, ok := a.actionKind(action.KindReleaseReservation); ok {
			for i := range out.Body.Families.Items {
				rows := out.Body.Families.Items[i].Rows
				for j := range rows {
					if rows[j].Orphan == apiv1.OrphanOrphaned {
						rows[j].Actions = []apiv1.KeyAction{apiKeyAction(k)}
					}
				}
			}
		}
	}
	return out, nil
}

type apiBansIn struct {
	Conn   string `path:"conn" doc:"The connection's name."`
	List   string `query:"list" doc:"The list (its family id) whose members are paged with filter and cursor; the others are read from their first page."`
	Filter string `query:"filter" doc:"Members of list containing this text (\"\": every member)."`
	Cursor string `query:"cursor" doc:"The list's SSCAN cursor to continue from: the next of the previous page."`
}

type apiBansOut struct{ Body apiv1.BansPage }

// apiBans reads every list as the Bans page does (bans.ReadPage), with no
// name to check (that is ban-check).
func (a *App) apiBans(ctx context.Context, c echo.Context, in *apiBansIn) (*apiBansOut, error) {
	conn, err := a.conns.Get(in.Conn)
	if err != nil {
		return nil, err
	}
	q, err := route.ParseBansQuery(conn.Name, c.QueryParams())
	if err != nil {
		return nil, err
	}
	var reads []bans.ListRead
	for _, l := range bans.Lists(conn) {
		pq := bans.PageQuery{Listed: q.List == l.ID, Pages: bansPagePages}
		if pq.Listed {
			pq.Filter, pq.Cursor = q.Filter, q.Cursor
		}
		reads = append(reads, bans.ReadPage(ctx, conn, l, pq, a.now()))
	}
	return &apiBansOut{Body: apiv1.Bans(conn.Name, conn.PackChoice(), conn.Status(), reads, q.List, q.Filter, a.apiErrText(conn))}, nil
}

type apiDBIn struct {
	Conn string `path:"conn" doc:"The connection's name."`
	N    string `path:"n" doc:"The database index, 0 to 255."`
}

type apiDBStatsOut struct{ Body apiv1.DBStatsPage }

// apiDBStats answers what the database page shows: its sweeper's detail,
// waited for its first read as the page waits (not when the server is
// known to be down).
func (a *App) apiDBStats(ctx context.Context, _ echo.Context, in *apiDBIn) (*apiDBStatsOut, error) {
	conn, db, err := a.openDB(ctx, in.Conn, in.N)
	if err != nil {
		return nil, err
	}
	s, release := a.sweepers.Acquire(conn, db)
	defer release()
	st := conn.Status()
	total := redisview.None[int64](statusText(st))
	if down := !st.Up && !st.Checked.IsZero(); !down {
		s.WaitRead(ctx, firstRead)
		total = stats.TotalKeys(ctx, conn, db)
	}
	return &apiDBStatsOut{Body: apiv1.DBStats(s.Detail(total), conn.PackChoice(), st, a.now())}, nil
}

type apiAuditIn struct {
	User   string `query:"user" doc:"Records of this console user only."`
	Action string `query:"action" doc:"Records of this action kind only."`
	Key    string `query:"key" doc:"Records whose keys contain this text."`
	Since  string `query:"since" doc:"Records at or after this time."`
	Until  string `query:"until" doc:"Records before this time."`
	Before string `query:"before" doc:"The page: records older than this cursor (the next of the previous page)."`
}

type apiAuditOut struct{ Body apiv1.AuditPage }

// apiAudit reads one page of the audit log as the audit page does.
func (a *App) apiAudit(ctx context.Context, c echo.Context, _ *apiAuditIn) (*apiAuditOut, error) {
	f, err := route.ParseAuditFilter(c.QueryParams())
	if err != nil {
		return nil, err
	}
	if a.audit == nil {
		return nil, apiv1.NewProblem(http.StatusServiceUnavailable, "", "no audit log is configured")
	}
	recs, next, err := a.audit.ReadAudit(ctx, auditFilter(f))
	if err != nil {
		return nil, err
	}
	return &apiAuditOut{Body: apiv1.Audit(recs, next)}, nil
}
