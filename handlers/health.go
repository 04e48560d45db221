package handlers

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
)

// Probe is what /healthz and /readyz say, as JSON when asked.
type Probe struct {
	Status string   `json:"status"` // "ok", "ready", "not ready"
	Down   []string `json:"down"`   // which connections are down, since when (when told)
}

// probe answers a probe in text (what load balancers read) or JSON.
func probe(c echo.Context, status int, p Probe) error {
	c.Response().Header().Add(echo.HeaderVary, echo.HeaderAccept)
	if wantsJSON(c.Request()) {
		if p.Down == nil {
			p.Down = []string{}
		}
		return c.JSON(status, p)
	}
	lines := append([]string{p.Status}, p.Down...)
	return c.String(status, strings.Join(lines, "\n")+"\n")
}

// healthz answers while the process serves.
func (a *App) healthz(c echo.Context) error { return probe(c, http.StatusOK, Probe{Status: "ok"}) }

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
		p := Probe{Status: "not ready"}
		if a.auth.ReadyzDetail || identity(c).Signed() {
			p.Down = down
		}
		return probe(c, http.StatusServiceUnavailable, p)
	}
	return probe(c, http.StatusOK, Probe{Status: "ready"})
}
