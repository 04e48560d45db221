package handlers

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/stats"
	"github.com/keydeck/keydeck/views"
	"github.com/keydeck/keydeck/views/format"
)

// violationsPage lists every schema violation of a connection: it holds
// the statistics sweeper of each database that has keys (as the database
// pages do, so they run on for their linger after the page is served)
// and lists what each has found. Violations carry key names, families
// and problems, never a value.
func (a *App) violationsPage(c echo.Context) error {
	conn, err := a.conns.Get(c.Param("conn"))
	if err != nil {
		return err
	}
	return a.violationDetails(c.Request().Context(), conn, func(details []stats.DBDetail, pc redisview.PackChoice, st redisview.Status, readErr string) error {
		vm := violationsVM(conn.Name, details, pc, st, readErr)
		return render(c, http.StatusOK, vm, views.ViolationsPage(a.page(c, "Violations · "+conn.Name, conn.Name), vm))
	})
}

// violationDetails reads what the Violations page and list-violations
// show, and hands it to show while it holds the sweepers.
func (a *App) violationDetails(ctx context.Context, conn *redisview.Conn, show func([]stats.DBDetail, redisview.PackChoice, redisview.Status, string) error) error {
	conn.EnsurePack(a.conns.Packs())
	st := conn.Status()
	pc := conn.PackChoice()
	var (
		details []stats.DBDetail
		readErr string
		dbs     []int
		keys    []int64 // each database's key count, from the overview's one keyspace read
	)
	down := !st.Up && !st.Checked.IsZero()
	if !down && pc.Pack != nil {
		ov := a.overviews[conn.Name].Latest(ctx, 3*time.Second)
		readErr = ov.Err
		for _, d := range ov.DBs {
			dbs, keys = append(dbs, d.Index), append(keys, d.Keys)
		}
	}
	if len(dbs) > 0 {
		held := make([]*stats.Sweeper, len(dbs))
		for i, db := range dbs {
			s, release := a.sweepers.Acquire(conn, db)
			defer release()
			held[i] = s
		}
		// One wait for all: the sweepers read their first batches together.
		deadline := time.Now().Add(firstRead)
		for _, s := range held {
			s.WaitRead(ctx, max(0, time.Until(deadline)))
		}
		// Each database's total comes from the overview's keyspace read
		// (INFO keyspace, or DBSIZE where INFO has none): one read for the
		// page, not one per database.
		for i, s := range held {
			details = append(details, s.Detail(redisview.Some(keys[i])))
		}
	} else if down {
		// Nothing can be read: what the sweeps last found, said as such.
		for db := range redisview.DefaultDatabases {
			if d, ok := a.sweepers.Known(conn.Name, db); ok {
				details = append(details, d)
			}
		}
	}
	return show(details, pc, st, readErr)
}

// violationsVM turns the databases' statistics into the list.
func violationsVM(conn string, details []stats.DBDetail, pc redisview.PackChoice, st redisview.Status, readErr string) views.ViolationsVM {
	vm := views.ViolationsVM{Conn: conn, Err: readErr}
	if !st.Up && !st.Checked.IsZero() {
		vm.Disconnected = "Redis is unreachable — " + statusText(st) + ". Listed below: what the sweeps had found before."
	}
	switch {
	case pc.Pack == nil && pc.Why == "":
		vm.Empty = "Not known yet: matching the connection to a pack…"
		return vm
	case pc.Pack == nil:
		vm.Empty = "No schema pack explains this connection's keys (" + pc.Why + "), so no key can break one."
		return vm
	}
	var total int64
	swept, sampled := 0, false
	for _, d := range details {
		row := views.ViolationsDB{DB: d.DB, Href: route.DatabaseURL(conn, d.DB), Count: format.Count(d.ViolCount)}
		done := !d.CompletedAt.IsZero()
		switch {
		case done:
			swept++
			row.Status = "As of the sweep completed at " + format.Clock(d.CompletedAt)
			if violationsEstimated(d) {
				sampled = true
				row.Count = "≈ " + row.Count
				row.Status += "; estimated from a sample (type violations are found in the keys read whole and scaled to each family)"
			}
		case d.Estimated:
			row.Count = "≈ " + row.Count
			row.Status = "Estimated from " + format.Percent(d.Coverage, 0) + " of keys — the first sweep is running"
		default:
			row.Count = "—"
			row.Status = "Not known yet: the first sweep of this database has not read anything"
		}
		if d.Err != "" {
			row.Err = "The sweep cannot read this database: " + d.Err + "."
		}
		total += d.ViolCount
		if n := int64(len(d.Violations)); d.ViolCount > n && n > 0 {
			row.More = fmt.Sprintf("The first %d of %s are listed; the database page has the rest of its figures.", n, format.Count(d.ViolCount))
		}
		for _, v := range d.Violations {
			row.Rows = append(row.Rows, views.ViolationRow{Key: v.Key, Family: v.Family, Problem: v.Problem, Href: keyHref(conn, d.DB, v.Key)})
		}
		vm.DBs = append(vm.DBs, row)
	}
	vm.Complete = swept == len(details) && readErr == "" && vm.Disconnected == ""
	vm.Total = format.Count(total)
	if sampled {
		vm.Total = "≈ " + vm.Total
	}
	switch {
	case len(details) == 0 && vm.Disconnected == "" && readErr == "":
		vm.Status = "This server holds no keys."
		vm.Complete = true
	case vm.Complete:
		vm.Status = "Every database holding keys swept: " + format.Plural(int64(swept), "database", "databases") + "."
	default:
		if sampled {
			vm.Total = "≈ " + format.Count(total) + " or more"
		} else {
			vm.Total = "≥ " + vm.Total
		}
		vm.Status = fmt.Sprintf("%d of %d databases swept so far; the sweeps run on for a while — reload to see the rest.", swept, len(details))
	}
	if vm.Complete && total == 0 && len(details) > 0 {
		vm.Empty = "No violations: every classified key obeys its pack."
	}
	return vm
}

// overviewViolations adds each database's violation count, as its last
// completed sweep found it, to the overview; it reads no server.
func (a *App) overviewViolations(vm *views.OverviewVM, conn string) {
	if a.sweepers == nil {
		return
	}
	vm.ViolationsHref = route.ViolationsURL(conn)
	for i := range vm.DBs {
		row := &vm.DBs[i]
		d, ok := a.sweepers.Known(conn, row.Index)
		if !ok {
			row.Violations, row.ViolationsWhy = "—", "not swept yet: the violations list or the database page sweeps it"
			continue
		}
		row.Violations, row.HasViol = format.Count(d.ViolCount), d.ViolCount > 0
		row.ViolationsWhy = "as of the sweep completed at " + format.Clock(d.CompletedAt)
		if violationsEstimated(d) {
			row.Violations = "≈ " + row.Violations
			row.ViolationsWhy += ", estimated from a sample"
		}
	}
}
