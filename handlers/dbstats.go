package handlers

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/keydeck/keydeck/internal/live"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/redisview/stats"
	"github.com/keydeck/keydeck/views"
	"github.com/keydeck/keydeck/views/format"
)

const dbStatsKind = "dbstats"

// DBTopic is one database's live statistics: "dbstats:NAME:DB".
type DBTopic struct {
	Conn string
	DB   int
}

func (t DBTopic) String() string    { return dbStatsKind + ":" + t.Conn + ":" + strconv.Itoa(t.DB) }
func (DBTopic) Level() action.Level { return action.Viewer }

func parseDBTopic(arg string) (Topic, error) {
	name, dbs, _ := strings.Cut(arg, ":")
	db, err := route.ParseDB(dbs)
	if err != nil || !redisview.ValidName(name) {
		return nil, ErrUnknownTopic
	}
	return DBTopic{Conn: name, DB: db}, nil
}

// source renders the database's statistics; each source holds the
// database's sweeper while the topic has viewers.
func (t DBTopic) source(a *App) (func() live.Source, error) {
	conn, err := a.conns.Get(t.Conn)
	if err != nil {
		return nil, err
	}
	// No sweeper for a database the server does not have.
	ctx, cancel := context.WithTimeout(a.ctx, 2*time.Second)
	defer cancel()
	if err := conn.CheckDB(ctx, t.DB); errors.Is(err, redisview.ErrNoDatabase) {
		return nil, fmt.Errorf("%w %q: %w", ErrUnknownTopic, t.String(), err)
	}
	return func() live.Source {
		s, release := a.sweepers.Acquire(conn, t.DB)
		return &dbSource{conn: conn, db: t.DB, sweeper: s, release: release, now: a.now}
	}, nil
}

// Sweepers is what database pages need of the statistics sweepers
// (stats.Sweepers): one sweeper per database, held while a page or topic
// shows it.
type Sweepers interface {
	Acquire(conn *redisview.Conn, db int) (s *stats.Sweeper, release func())
	// Known is a database's last completed pass, read from no server.
	Known(conn string, db int) (stats.DBDetail, bool)
}

// connDB resolves the :conn and :db route parameters.
func (a *App) connDB(c echo.Context) (*redisview.Conn, int, error) {
	return a.openDB(c.Request().Context(), c.Param("conn"), c.Param("db"))
}

// openDB is connDB of a connection's name and a database index as the
// path gives them.
func (a *App) openDB(ctx context.Context, name, dbText string) (*redisview.Conn, int, error) {
	conn, err := a.conns.Get(name)
	if err != nil {
		return nil, 0, err
	}
	db, err := route.PathDB(dbText)
	if err != nil {
		return nil, 0, err
	}
	// A database the server does not have is no page. A server that is
	// down cannot be asked: the page says it is disconnected instead.
	if st := conn.Status(); st.Up || st.Checked.IsZero() {
		if err := conn.CheckDB(ctx, db); errors.Is(err, redisview.ErrNoDatabase) {
			return nil, 0, withBack(err, route.OverviewURL(conn.Name))
		}
	}
	return conn, db, nil
}

// firstRead is how long a page waits for a sweeper that has just started
// to read its first batch, so it opens with figures rather than an empty
// frame that fills a second later.
const firstRead = 1500 * time.Millisecond

// dbPage renders one database's statistics; the websocket keeps them live.
func (a *App) dbPage(c echo.Context) error {
	conn, db, err := a.connDB(c)
	if err != nil {
		return err
	}
	s, release := a.sweepers.Acquire(conn, db)
	defer release()
	ctx := c.Request().Context()
	st := conn.Status()
	total := redisview.None[int64](statusText(st))
	if down := !st.Up && !st.Checked.IsZero(); !down {
		// A server known to be down is not waited for: the page says so at once.
		s.WaitRead(ctx, firstRead)
		total = stats.TotalKeys(ctx, conn, db)
	}
	d := s.Detail(total)
	vm := dbVM(d, conn.PackChoice(), st, a.now())
	vm.FamCharts = familyCharts(d, a.now())
	vm.Create = a.createForm(c, conn.Name, db)
	title := fmt.Sprintf("%s · db%d", conn.Name, db)
	return render(c, http.StatusOK, vm, views.DBPage(a.page(c, title, conn.Name), vm))
}

// dbSource renders a database's statistics; it holds the sweeper while the
// topic has viewers.
type dbSource struct {
	conn    *redisview.Conn
	db      int
	sweeper *stats.Sweeper
	release func()
	now     func() time.Time
}

func (s *dbSource) Poll(ctx context.Context) ([]byte, error) {
	d := s.sweeper.Detail(stats.TotalKeys(ctx, s.conn, s.db))
	vm := dbVM(d, s.conn.PackChoice(), s.conn.Status(), s.now())
	vm.FamCharts = familyCharts(d, s.now())
	return renderBytes(ctx, dbFragment(vm))
}

func (s *dbSource) Close() error { s.release(); return nil }

func dbFragment(vm views.DBPageVM) templ.Component { return views.DBLive(vm, true) }

// unmatchedRow names the row of the keys no family of the pack explains.
const unmatchedRow = "matching no pattern"

// shares turns parts into whole percentages of their sum that add up to
// exactly 100 (largest remainders round up); all zero when the sum is.
func shares(parts []int64) []int {
	out := make([]int, len(parts))
	var sum int64
	for _, p := range parts {
		sum += max(0, p)
	}
	if sum <= 0 {
		return out
	}
	type rem struct {
		i int
		r float64
	}
	rems := make([]rem, len(parts))
	left := 100
	for i, p := range parts {
		exact := float64(max(0, p)) * 100 / float64(sum)
		out[i] = int(exact)
		left -= out[i]
		rems[i] = rem{i, exact - float64(out[i])}
	}
	slices.SortStableFunc(rems, func(a, b rem) int { return cmp.Compare(b.r, a.r) })
	for k := 0; k < left && k < len(rems); k++ {
		out[rems[k].i]++
	}
	return out
}

// dbVM converts a database's statistics into the view model. Until a pass
// has completed, or while the connection is down, the page says what is
// not known instead of claiming that nothing is wrong.
func dbVM(d stats.DBDetail, pc redisview.PackChoice, st redisview.Status, now time.Time) views.DBPageVM {
	vm := views.DBPageVM{
		Conn: d.Conn, DB: d.DB, WSURL: route.LiveURL(DBTopic{Conn: d.Conn, DB: d.DB}.String()), Err: d.Err,
		Total:     optString(mapOpt(d.TotalKeys, format.Count)),
		Budget:    sweepBudget(d.Budget) + readPath(d.ReadPath),
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
		vm.NoPack = pc.Why // it says when the server is sampled again
	}
	vm.Status = sweepStatus(d)
	dbKnown(&vm, d, st)
	vm.Domains = domainRows(d)
	for _, b := range stats.TTLBuckets {
		vm.TTLLabels = append(vm.TTLLabels, b.Label)
	}
	vm.Families = familyRows(d)
	dbKeyLists(&vm, d)
	dbFigures(&vm, d, now)
	if d.MemoryWhy != "" {
		vm.MemoryNote = "Memory per key is unavailable: " + d.MemoryWhy + "."
	}
	return vm
}

// sweepStatus says where the sweep stands: estimating from a partial
// first pass, sweeping, or the pass shown and the next.
func sweepStatus(d stats.DBDetail) string {
	switch {
	case d.Estimated:
		return "Estimated from " + format.Percent(d.Coverage, 0) + " of keys (" + format.Count(d.Seen) + " read) — the first sweep is running"
	case d.Pass == 0:
		return "Sweeping…"
	case !d.UnchangedSince.IsZero():
		return "Pass completed at " + format.Clock(d.CompletedAt) +
			"; unchanged since " + format.Clock(d.UnchangedSince) + " (no write since), so no new pass runs"
	}
	// No "N s ago" here: a fragment that changed every second would be
	// re-sent every tick (the age, in minutes, is figuresAge's).
	return "Pass completed at " + format.Clock(d.CompletedAt) +
		"; pass " + format.Count(int64(d.Pass)+1) + " running, " + format.Plural(d.Seen, "key", "keys") + " read"
}

// dbKnown says what is not known (the connection down, no pass complete)
// and marks the counts that are estimates or unknown.
func dbKnown(vm *views.DBPageVM, d stats.DBDetail, st redisview.Status) {
	complete := !d.CompletedAt.IsZero()
	switch {
	case !st.Up && !st.Checked.IsZero():
		vm.Disconnected = "Redis is unreachable — " + statusText(st) + "."
		if complete {
			vm.Disconnected += " The figures below are from the sweep completed at " + format.Clock(d.CompletedAt) + "."
		} else {
			vm.Unknown = "Not known: " + statusText(st) + ", before a sweep of this database completed."
		}
	case !complete:
		vm.Unknown = "Not known yet: the first sweep of this database has not finished."
	}
	if vm.Unknown != "" && !d.Estimated {
		// Nothing read: zero would be a statement about the data.
		vm.ViolCount, vm.UnmCount = "—", "—"
	}
	if d.Estimated {
		vm.ViolCount = "≈ " + vm.ViolCount
		vm.UnmCount = "≈ " + vm.UnmCount
	} else if vm.Unknown == "" && violationsEstimated(d) {
		vm.ViolCount = "≈ " + vm.ViolCount
		vm.ViolNote = "estimated from a sample: type violations are found in the keys read whole and scaled to each family"
	}
}

// hasUnmatched: the tables get an unmatched row. Shares are of what the
// tables show, the unmatched row included, and rounded so that each
// column adds up to 100%.
func hasUnmatched(d stats.DBDetail) bool { return d.UnmCount > 0 || d.UnmMemory > 0 }

func domainRows(d stats.DBDetail) []views.ShareRow {
	unm := hasUnmatched(d)
	var dk, dm []int64
	for _, ds := range d.Domains {
		dk, dm = append(dk, ds.Count), append(dm, ds.Memory)
	}
	// A domain's memory is its families': exact when each is, else an
	// estimate whose margin adds theirs (independent samples).
	type domSample struct {
		sampled, keys int64
		errs          []int64
	}
	dom := map[string]*domSample{}
	for _, f := range d.Families {
		x := dom[f.Family.Domain]
		if x == nil {
			x = &domSample{}
			dom[f.Family.Domain] = x
		}
		x.sampled += min(f.Sampled, f.Count)
		x.keys += f.Count
		x.errs = append(x.errs, f.MemoryErr)
	}
	domMem := func(name string, mem int64) (string, string) {
		x := dom[name]
		if x == nil {
			return memString(mem, d.MemoryWhy), ""
		}
		v, _, title := memoryFigure(mem, sumErr(x.errs...), x.sampled, x.keys, d.MemoryWhy)
		return v, title
	}
	if unm {
		dk, dm = append(dk, d.UnmCount), append(dm, d.UnmMemory)
	}
	dkPct, dmPct := shares(dk), shares(dm)
	var rows []views.ShareRow
	for i, ds := range d.Domains {
		mem, title := domMem(ds.Domain, ds.Memory)
		rows = append(rows, views.ShareRow{
			Name: ds.Domain, Keys: format.Count(ds.Count), KeysPct: dkPct[i],
			Memory: mem, MemoryTitle: title, MemPct: dmPct[i],
		})
	}
	if unm && len(d.Domains) > 0 {
		n := len(d.Domains)
		mem, _, title := memoryFigure(d.UnmMemory, d.UnmMemoryErr, d.UnmSampled, d.UnmCount, d.MemoryWhy)
		rows = append(rows, views.ShareRow{Name: unmatchedRow, Unmatched: true,
			Keys: format.Count(d.UnmCount), KeysPct: dkPct[n], Memory: mem, MemoryTitle: title, MemPct: dmPct[n]})
	}
	return rows
}

func familyRows(d stats.DBDetail) []views.FamilyRow {
	unm := hasUnmatched(d)
	var fk, fm []int64
	for _, f := range d.Families {
		fk, fm = append(fk, f.Count), append(fm, f.Memory)
	}
	if unm {
		fk, fm = append(fk, d.UnmCount), append(fm, d.UnmMemory)
	}
	fkPct, fmPct := shares(fk), shares(fm)
	var rows []views.FamilyRow
	for i, f := range d.Families {
		row := views.FamilyRow{
			ID: f.Family.ID, Domain: f.Family.Domain, Role: string(f.Family.Role), Type: f.Family.Type,
			TTLPolicy: format.TTLPolicy(f.Family.TTL), Sensitive: f.Family.Sensitive, Pattern: f.Family.Pattern.String(),
			Keys: format.Count(f.Count), KeysPct: fkPct[i],
			Memory: memString(f.Memory, d.MemoryWhy), MemPct: fmPct[i],
			Violations: format.Count(f.Violations), HasViol: f.Violations > 0,
			Href: route.FamilyKeysURL(d.Conn, d.DB, f.Family.ID),
			TTL:  ttlHistogram(f.TTL),
		}
		familyFigures(&row, f, d)
		if row.TTLScaled || d.Estimated { // scaled from a sample, or from the first pass's coverage
			for j := range row.TTL {
				row.TTL[j].Count = "≈ " + row.TTL[j].Count
			}
		}
		rows = append(rows, row)
	}
	if unm && len(d.Families) > 0 {
		n := len(d.Families)
		row := views.FamilyRow{ID: unmatchedRow, Unmatched: true,
			Keys: format.Count(d.UnmCount), KeysPct: fkPct[n], MemPct: fmPct[n]}
		familyFigures(&row, stats.FamilyStats{Count: d.UnmCount, Memory: d.UnmMemory, MemoryErr: d.UnmMemoryErr, Sampled: d.UnmSampled}, d)
		rows = append(rows, row)
	}
	return rows
}

// ttlHistogram is a family's keys per TTL bucket, each cell's level 1–4
// against the fullest bucket (0: none).
func ttlHistogram(counts stats.TTLHistogram) []views.HistCell {
	var peak int64
	for _, n := range counts {
		peak = max(peak, n)
	}
	var out []views.HistCell
	for i, n := range counts {
		level := 0
		if n > 0 && peak > 0 {
			level = 1 + int(n*3/peak)
		}
		out = append(out, views.HistCell{Label: stats.TTLBuckets[i].Label, Count: format.Count(n), Level: level})
	}
	return out
}

// dbKeyLists is the lists of keys: violations, unmatched prefixes, and the
// largest keys by memory, elements and length.
func dbKeyLists(vm *views.DBPageVM, d stats.DBDetail) {
	for _, v := range d.Violations {
		vm.Violations = append(vm.Violations, views.ViolationRow{Key: v.Key, Family: v.Family, Problem: v.Problem, Href: keyHref(d.Conn, d.DB, v.Key)})
	}
	for _, u := range d.Unmatched {
		vm.Unmatched = append(vm.Unmatched, views.PrefixRow{Prefix: u.Prefix, Keys: format.Count(u.Count), Examples: u.Examples, Href: prefixListHref(d.Conn, d.DB, u.Prefix)})
	}
	for _, b := range d.ByMemory {
		size := format.Bytes(b.Memory)
		if b.MemoryEstimated {
			size = "≈ " + size // sampled (MEMORY USAGE … SAMPLES 5)
		}
		vm.ByMemory = append(vm.ByMemory, views.BigKeyRow{Key: b.Key, Family: orUnmatched(b.Family), Type: b.Type, Size: size, Href: keyHref(d.Conn, d.DB, b.Key)})
	}
	for _, b := range d.ByElements {
		vm.ByElements = append(vm.ByElements, views.BigKeyRow{Key: b.Key, Family: orUnmatched(b.Family), Type: b.Type, Size: format.Size(b.Elements, b.Type), Href: keyHref(d.Conn, d.DB, b.Key)})
	}
	for _, b := range d.ByLength {
		vm.ByLength = append(vm.ByLength, views.BigKeyRow{Key: b.Key, Family: orUnmatched(b.Family), Type: b.Type, Size: format.Size(b.Elements, b.Type), Href: keyHref(d.Conn, d.DB, b.Key)})
	}
}

// sweepBudget is the user's budget for a sweep, in keys and Redis CPU.
func sweepBudget(b stats.SweepBudget) string {
	s := "sweep budget " + format.Count(int64(b.KeysPerSec)) + " keys/s, SCAN COUNT " + format.Count(int64(b.Count))
	if b.CPU > 0 {
		s += ", at most " + cpuShare(b.CPU) + " of a Redis core"
	}
	return s
}

// readPath says how the sweep reads the database, after its budget.
func readPath(p string) string {
	if p == "" {
		return ""
	}
	return "; read with " + p
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
