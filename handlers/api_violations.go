package handlers

import (
	"context"

	"github.com/labstack/echo/v4"

	"github.com/keydeck/keydeck/internal/apiv1"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/stats"
)

type apiViolationsOut struct{ Body apiv1.ViolationsPage }

// apiViolations answers what the Violations page shows: every database
// holding keys, its statistics sweep waited for its first read as the
// page waits.
func (a *App) apiViolations(ctx context.Context, _ echo.Context, in *apiConnIn) (*apiViolationsOut, error) {
	conn, err := a.conns.Get(in.Conn)
	if err != nil {
		return nil, err
	}
	out := &apiViolationsOut{}
	err = a.violationDetails(ctx, conn, func(details []stats.DBDetail, pc redisview.PackChoice, st redisview.Status, readErr string) error {
		out.Body = apiv1.Violations(conn.Name, details, pc, st, readErr)
		return nil
	})
	return out, err
}
