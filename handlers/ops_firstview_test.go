package handlers_test

import (
	"strings"
	"testing"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/internal/server"
	"github.com/keydeck/keydeck/redisview"
)

// The first view of the Rate limits and Locks pages on a fresh console
// (the sweeper starts with that request) never says the pack has no
// family of the kind: eIsland has both. Each page and format gets its own
// console, forced to eisland or matched by sampling, so that each is a
// cold start.
func TestOpsPagesFirstViewNeverSayNoFamily(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	seedLimits(t, rs)
	for _, forced := range []bool{true, false} {
		for _, c := range []struct {
			page, accept, never string
		}{
			{route.LocksURL("main"), "text/html", "No lock family"},
			{route.LocksURL("main"), "application/json", `"no_family"`},
			{route.LimitsURL("main"), "text/html", "No rate-limit family"},
			{route.LimitsURL("main"), "application/json", `"no_family"`},
		} {
			cfg := server.Config{Conns: []redisview.ConnConfig{{Name: "main", URL: rs.URL(0)}}}
			if forced {
				cfg.PackFor = map[string]string{"main": "eisland"}
			}
			f := startConsole(t, rs, cfg, nil)
			code, _, body := get(t, f.srv.URL+c.page, "Accept", c.accept)
			if code != 200 || strings.Contains(body, c.never) {
				t.Errorf("forced %v, first %s of %s: %d %.2000s", forced, c.accept, c.page, code, body)
			}
		}
	}
}
