package handlers

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/keydeck/keydeck/internal/apiv1"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/browse"
	"github.com/keydeck/keydeck/redisview/stats"
)

// The API's operations of a connection's overview and key lists: each
// reads what its page reads and maps it with internal/apiv1.

type apiOverviewOut struct{ Body apiv1.OverviewPage }

// apiOverview answers what the overview page shows: the connection's
// overview reader's latest reading, with each database's violations as
// the statistics sweeps last counted them.
func (a *App) apiOverview(ctx context.Context, _ echo.Context, in *apiConnIn) (*apiOverviewOut, error) {
	conn, err := a.conns.Get(in.Conn)
	if err != nil {
		return nil, err
	}
	r := a.overviews[conn.Name]
	if r == nil {
		return nil, fmt.Errorf("%w: %s has no overview reader", redisview.ErrRead, conn.Name)
	}
	var known func(db int) (stats.DBDetail, bool)
	if a.sweepers != nil {
		known = func(db int) (stats.DBDetail, bool) { return a.sweepers.Known(conn.Name, db) }
	}
	return &apiOverviewOut{Body: apiv1.Overview(r.Latest(ctx, 3*time.Second), conn.PackChoice(), known)}, nil
}

type apiKeysIn struct {
	Conn   string `path:"conn" doc:"The connection's name."`
	N      string `path:"n" doc:"The database index, 0 to 255."`
	Family string `query:"family" doc:"The keys of this family (its id), instead of prefix."`
	Prefix string `query:"prefix" doc:"The keys starting with this text (\"\" with prefix present: every key), instead of family."`
	Flat   string `query:"flat" doc:"1: every key under prefix, not grouped by the next separator."`
	At     string `query:"at" doc:"Where the walk continues: the next of the previous page."`
}

type apiKeysOut struct{ Body apiv1.KeysPage }

// apiKeys lists a page of keys as the keys page does (browse.List, a
// bounded SCAN walk). A server known to be down is not asked.
func (a *App) apiKeys(ctx context.Context, c echo.Context, in *apiKeysIn) (*apiKeysOut, error) {
	conn, db, err := a.openDB(ctx, in.Conn, in.N)
	if err != nil {
		return nil, err
	}
	l, err := parseKeyList(conn.Name, db, c.QueryParams())
	if err != nil {
		return nil, err
	}
	req, err := l.request(conn)
	if err != nil {
		return nil, err
	}
	if st := conn.Status(); !st.Up && !st.Checked.IsZero() {
		return nil, fmt.Errorf("%w: %s is %s: no key was read", redisview.ErrRead, conn.Name, statusText(st))
	}
	req.Budget = a.scanTap(conn.Name, identity(c).Holder()) // the caller's share, as searches
	pg, err := browse.List(ctx, conn, db, req)
	if errors.Is(err, redisview.ErrBadCursor) { // ?at= of another kind of deployment: 400, as the page
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("%w: the keys could not be listed: %s", redisview.ErrRead, conn.SafeErr(err))
	}
	return &apiKeysOut{Body: apiv1.Keys(conn.Name, db, req, pg)}, nil
}
