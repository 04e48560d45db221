package handlers

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/stats"
	"github.com/keydeck/keydeck/views"
)

// The overview of a cluster (Topology: one database) says a cluster has
// database 0 only; a standalone server's does not.
func TestOverviewSaysClusterHasDB0Only(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		databases int
		want      bool
	}{{1, true}, {0, false}} {
		ov := stats.Overview{Conn: "main", Status: redisview.Status{Up: true, Checked: at}, At: at, Databases: c.databases,
			DBs: []stats.DBStats{{Index: 0, Keys: 10}}}
		vm := overviewVM(ov, at)
		var b bytes.Buffer
		if err := views.OverviewLive(vm, true).Render(context.Background(), &b); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(b.String(), "A cluster has database 0 only."); got != c.want || vm.OnlyDB0 != c.want {
			t.Errorf("databases %d: the page says it %v (vm %v), want %v", c.databases, got, vm.OnlyDB0, c.want)
		}
	}
}
