package handlers

import (
	"context"
	"errors"
	"fmt"

	"github.com/labstack/echo/v4"

	"github.com/keydeck/keydeck/internal/apiv1"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/quotas"
	"github.com/keydeck/keydeck/redisview/search"
	"github.com/keydeck/keydeck/views/format"
)

// The API's finding operations (search, a gateway key): each reads what
// its page reads and maps it with internal/apiv1.

type apiSearchIn struct {
	Conn string `path:"conn" doc:"The connection's name."`
	Q    string `query:"q" doc:"What to search for: a value (a username, an id…), a family's id, or a glob pattern."`
	Cont string `query:"cont" doc:"Continue the scans from here: the next of the previous answer."`
}

type apiSearchOut struct{ Body apiv1.SearchPage }

// apiSearch runs one bounded request of the search, as the search page's
// JSON and continue requests do (search.Run, the connection's scan budget
// drawn as the caller).
func (a *App) apiSearch(ctx context.Context, c echo.Context, in *apiSearchIn) (*apiSearchOut, error) {
	conn, err := a.conns.Get(in.Conn)
	if err != nil {
		return nil, err
	}
	if len(in.Q) > search.MaxQuery {
		return nil, fmt.Errorf("%w: the search is %s long; at most %s", route.ErrParam, format.ByteCount(int64(len(in.Q))), format.ByteCount(search.MaxQuery))
	}
	cursors, err := search.ParseCursors(in.Cont)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", route.ErrParam, err.Error())
	}
	query := search.Parse(in.Q, conn.Pack())
	switch {
	case query.Kind == search.Empty:
		return nil, fmt.Errorf("%w: name what to search for with ?q=", route.ErrParam)
	case query.Kind == search.Value && conn.Pack() == nil:
		return nil, fmt.Errorf("%w: %s has no schema pack (not chosen yet or none fits), so no key can be derived from a value; search with a glob pattern", redisview.ErrRead, conn.Name)
	}
	lim := searchLimits
	lim.Budget = a.scanTap(conn.Name, identity(c).Holder())
	res, err := search.Run(ctx, conn, query, cursors, lim)
	if err != nil {
		return nil, err
	}
	return &apiSearchOut{Body: apiv1.Search(conn.Name, conn.PackChoice(), res, lim)}, nil
}

type apiGatewayKeyIn struct {
	Conn string `path:"conn" doc:"The connection's name."`
	ID   string `query:"id" required:"true" doc:"The API key's id."`
}

type apiGatewayKeyOut struct{ Body apiv1.GatewayKeyPage }

// apiGatewayKey reads one API key's state as the gateway key page does
// (quotas.ReadSubject, with the quota walker's breaker hints); 404 on a
// connection whose pack has no gateway keys.
func (a *App) apiGatewayKey(ctx context.Context, _ echo.Context, in *apiGatewayKeyIn) (*apiGatewayKeyOut, error) {
	conn, err := a.conns.Get(in.Conn)
	if err != nil {
		return nil, err
	}
	if _, err := quotas.SubjectOf(conn.Pack()); err != nil {
		return nil, fmt.Errorf("%w: %s on connection %s", route.ErrNoPage, err.Error(), conn.Name)
	}
	if in.ID == "" {
		return nil, fmt.Errorf("%w: name the API key with ?id=", route.ErrParam)
	}
	if err := checkKeyID(in.ID); err != nil {
		return nil, err
	}
	w, release := a.quotaWalkers.Acquire(conn)
	defer release()
	if s := conn.Status(); s.Up || s.Checked.IsZero() {
		w.WaitRead(ctx, firstRead) // for the breaker hints
	}
	st, err := quotas.ReadSubject(ctx, conn, in.ID, a.now())
	if errors.Is(err, quotas.ErrBadID) {
		return nil, fmt.Errorf("%w: key id: %v", route.ErrParam, err)
	}
	return &apiGatewayKeyOut{Body: apiv1.GatewayKey(conn.Name, in.ID, conn.Status(), st, err, w.Snapshot(), a.apiErrText(conn))}, nil
}
