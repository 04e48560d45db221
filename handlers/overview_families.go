package handlers

import (
	"strconv"
	"strings"
	"time"

	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/views"
	"github.com/keydeck/keydeck/views/format"
)

// overviewFamilies adds the keys per family over the last hour of each
// database whose sweep ran in this process (its page open now, or closed
// within the time the pool keeps a stopped sweeper's passes): charts of
// what the passes already counted; it reads no server and starts no
// sweep.
func (a *App) overviewFamilies(vm *views.OverviewVM, conn string, now time.Time) {
	if a.sweepers == nil {
		return
	}
	vm.ShowFamHours = true
	var covered []string
	for _, row := range vm.DBs {
		d, ok := a.sweepers.Known(conn, row.Index)
		if !ok || len(d.Hour) == 0 {
			continue
		}
		keys := familyCharts(d, now).Keys
		keys.TestID = "overview-family-keys-db" + strconv.Itoa(row.Index)
		last := d.Hour[len(d.Hour)-1].At
		vm.FamHours = append(vm.FamHours, views.OverviewFamHour{DB: row.Index, Href: route.DatabaseURL(conn, row.Index), Keys: keys,
			Passes: format.Plural(int64(len(d.Hour)), "pass", "passes") + ", the last completed at " + format.Clock(last)})
		covered = append(covered, "db"+strconv.Itoa(row.Index))
	}
	if len(covered) == 0 {
		vm.FamHoursNote = "No database has been swept by this Keydeck yet. Open a database to start its sweep: its largest families' keys over the last hour then show here, from the sweep's own passes."
		return
	}
	vm.FamHoursNote = "Covers " + strings.Join(covered, ", ") + ": the databases this Keydeck swept (a database page open now, or closed in the last minutes), charted from the passes the sweep kept — no Redis command of its own. Open another database to start its sweep."
}
