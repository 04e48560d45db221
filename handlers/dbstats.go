package handlers

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/keydeck/keydeck/internal/live"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/redisview/stats"
	"github.com/keydeck/keydeck/views"
	"github.com/keydeck/keydeck/views/format"
)

// maxDB bounds database indexes from URLs: each index gets its own client
// and sweeper, so the range must not be something a visitor can inflate.
// Redis defaults to 16 databases; 256 covers generous configurations.
const maxDB = 256

func dbTopic(conn string, db int) string { return "dbstats:" + conn + ":" + strconv.Itoa(db) }

// parseDB validates a database index from a URL.
func parseDB(s string) (int, error) {
	db, err := strconv.Atoi(s)
	if err != nil || db < 0 || db >= maxDB || strconv.Itoa(db) != s {
		return 0, echo.NewHTTPError(http.StatusNotFound, fmt.Sprintf("%q is not a database index", s))
	}
	return db, nil
}

// connDB resolves the :conn and :db route parameters.
func (a *App) connDB(c echo.Context) (*redisview.Conn, int, error) {
	conn, err := a.conns.Get(c.Param("conn"))
	if err != nil {
		return nil, 0, err
	}
	db, err := parseDB(c.Param("db"))
	return conn, db, err
}

// dbPage renders one database's statistics; the websocket keeps them live.
func (a *App) dbPage(c echo.Context) error {
	conn, db, err := a.connDB(c)
	if err != nil {
		return err
	}
	s, release := a.sweepers.Acquire(conn, db)
	defer release()
	ctx := c.Request().Context()
	vm := dbVM(s.Detail(stats.TotalKeys(ctx, conn, db)), conn.PackChoice())
	title := fmt.Sprintf("%s · db%d", conn.Name, db)
	return render(c, http.StatusOK, views.DBPage(a.page(c, title, conn.Name), vm))
}

// dbSource renders a database's statistics; it holds the sweeper while the
// topic has viewers.
type dbSource struct {
	conn    *redisview.Conn
	db      int
	sweeper *stats.Sweeper
	release func()
}

func (s *dbSource) Poll(ctx context.Context) ([]byte, error) {
	d := s.sweeper.Detail(stats.TotalKeys(ctx, s.conn, s.db))
	return renderBytes(ctx, dbFragment(dbVM(d, s.conn.PackChoice())))
}

func (s *dbSource) Close() error { s.release(); return nil }

func dbFragment(vm views.DBPageVM) templ.Component { return views.DBLive(vm, true) }

// dbStatsSource resolves "dbstats:CONN:DB".
func (a *App) dbStatsSource(arg string) (func() live.Source, action.Role, error) {
	name, dbs, ok := strings.Cut(arg, ":")
	if !ok {
		return nil, 0, fmt.Errorf("%w %q", errUnknownTopic, "dbstats:"+arg)
	}
	conn, err := a.conns.Get(name)
	if err != nil {
		return nil, 0, err
	}
	db, err := parseDB(dbs)
	if err != nil {
		return nil, 0, fmt.Errorf("%w %q", errUnknownTopic, "dbstats:"+arg)
	}
	return func() live.Source {
		s, release := a.sweepers.Acquire(conn, db)
		return &dbSource{conn: conn, db: db, sweeper: s, release: release}
	}, action.Viewer, nil
}

func pct(part, whole int64) int {
	if whole <= 0 {
		return 0
	}
	return int(part * 100 / whole)
}

// dbVM converts a database's statistics into the view model.
func dbVM(d stats.DBDetail, pc redisview.PackChoice) views.DBPageVM {
	vm := views.DBPageVM{
		Conn: d.Conn, DB: d.DB, WSURL: wsURL(dbTopic(d.Conn, d.DB)), Err: d.Err,
		Total:     optString(mapOpt(d.TotalKeys, format.Count)),
		Budget:    "sweep budget " + format.Count(int64(d.Budget.KeysPerSec)) + " keys/s, SCAN COUNT " + format.Count(int64(d.Budget.Count)),
		Estimated: d.Estimated,
		ViolCount: format.Count(d.ViolCount),
		UnmCount:  format.Count(d.UnmCount),
	}
	switch {
	case pc.Pack != nil:
		vm.Pack = pc.Pack.Name + " — " + pc.Why
	case pc.Why == "":
		vm.NoPack = "matching the connection to a pack…"
	default:
		vm.NoPack = pc.Why + " (sampled again every minute)"
	}
	switch {
	case d.Estimated:
		vm.Status = "Estimated from " + format.Percent(d.Coverage, 0) + " of keys (" + format.Count(d.Seen) + " read) — the first sweep is running"
	case d.Pass == 0:
		vm.Status = "Sweeping…"
	default:
		// No "N s ago": a fragment that changed every second would be re-sent every tick.
		vm.Status = "Exact as of the sweep completed at " + format.Clock(d.CompletedAt) +
			"; pass " + format.Count(int64(d.Pass)+1) + " running, " + format.Plural(d.Seen, "key", "keys") + " read"
	}
	if d.Estimated {
		vm.ViolCount = "≈ " + vm.ViolCount
		vm.UnmCount = "≈ " + vm.UnmCount
	}
	var famKeys int64
	for _, f := range d.Families {
		famKeys += f.Count
	}
	allKeys := famKeys + d.UnmCount
	for _, ds := range d.Domains {
		vm.Domains = append(vm.Domains, views.ShareRow{
			Name: ds.Domain, Keys: format.Count(ds.Count), KeysPct: pct(ds.Count, allKeys),
			Memory: memString(ds.Memory, d.MemoryWhy), MemPct: pct(ds.Memory, d.Memory),
		})
	}
	for _, b := range stats.TTLBuckets {
		vm.TTLLabels = append(vm.TTLLabels, b.Label)
	}
	for _, f := range d.Families {
		row := views.FamilyRow{
			ID: f.Family.ID, Domain: f.Family.Domain, Role: string(f.Family.Role), Type: f.Family.Type,
			TTLPolicy: f.Family.TTL.String(), Sensitive: f.Family.Sensitive, Pattern: f.Family.Pattern.String(),
			Keys: format.Count(f.Count), KeysPct: pct(f.Count, allKeys),
			Memory: memString(f.Memory, d.MemoryWhy), MemPct: pct(f.Memory, d.Memory),
			Violations: format.Count(f.Violations), HasViol: f.Violations > 0,
		}
		var peak int64
		for _, n := range f.TTL {
			peak = max(peak, n)
		}
		for i, n := range f.TTL {
			level := 0
			if n > 0 && peak > 0 {
				level = 1 + int(n*3/peak)
			}
			row.TTL = append(row.TTL, views.HistCell{Label: stats.TTLBuckets[i].Label, Count: format.Count(n), Level: level})
		}
		vm.Families = append(vm.Families, row)
	}
	for _, v := range d.Violations {
		vm.Violations = append(vm.Violations, views.ViolationRow{Key: v.Key, Family: v.Family, Problem: v.Problem, Href: keyHref(d.Conn, d.DB, v.Key)})
	}
	for _, u := range d.Unmatched {
		vm.Unmatched = append(vm.Unmatched, views.PrefixRow{Prefix: u.Prefix, Keys: format.Count(u.Count), Examples: u.Examples})
	}
	for _, b := range d.ByMemory {
		vm.ByMemory = append(vm.ByMemory, views.BigKeyRow{Key: b.Key, Family: orUnmatched(b.Family), Type: b.Type, Size: format.Bytes(b.Memory), Href: keyHref(d.Conn, d.DB, b.Key)})
	}
	for _, b := range d.ByElements {
		vm.ByElements = append(vm.ByElements, views.BigKeyRow{Key: b.Key, Family: orUnmatched(b.Family), Type: b.Type, Size: format.Size(b.Elements, b.Type), Href: keyHref(d.Conn, d.DB, b.Key)})
	}
	if d.MemoryWhy != "" {
		vm.MemoryNote = "Memory per key is unavailable: " + d.MemoryWhy + "."
	}
	return vm
}

func orUnmatched(fam string) string {
	if fam == "" {
		return "no family"
	}
	return fam
}

func memString(n int64, why string) string {
	if why != "" {
		return "n/a"
	}
	return format.Bytes(n)
}
