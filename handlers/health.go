package handlers

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
)

// healthz answers while the process serves.
func (a *App) healthz(c echo.Context) error { return c.String(http.StatusOK, "ok\n") }

// readyz is 200 only while every connection's monitor last saw it up. It is
// public, for load balancers and orchestrators; which connections are down
// (their names, since when) is told only to signed-in users or when
// --readyz-detail allows it, since names sketch the infrastructure.
func (a *App) readyz(c echo.Context) error {
	var down []string
	for _, conn := range a.conns.All() {
		st := conn.Status()
		if !st.Up {
			why := "not checked yet"
			if !st.Checked.IsZero() {
				why = "unreachable since " + st.Since.UTC().Format("2006-01-02T15:04:05Z")
			}
			down = append(down, conn.Name+": "+why)
		}
	}
	if len(down) > 0 {
		if !a.auth.ReadyzDetail && !identity(c).Signed() {
			return c.String(http.StatusServiceUnavailable, "not ready\n")
		}
		return c.String(http.StatusServiceUnavailable, "not ready\n"+strings.Join(down, "\n")+"\n")
	}
	return c.String(http.StatusOK, "ready\n")
}
