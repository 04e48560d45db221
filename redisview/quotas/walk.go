package quotas

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/keydeck/keydeck/internal/clock"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/redisview/stats"
)

// Budget bounds the walk: each Step makes at most Scans SCAN calls of COUNT
// Count, and each family keeps its TopN most used keys.
type Budget struct {
	TopN  int
	Scans int
	Count int
}

// Defaults: 20 rows per family; 10 SCAN calls of COUNT 200 a step (2,000
// keys a second at one step a second, the statistics sweep's rate).
var DefaultBudget = Budget{TopN: 20, Scans: 10, Count: 200}

func (b Budget) withDefaults() Budget {
	if b.TopN <= 0 {
		b.TopN = DefaultBudget.TopN
	}
	if b.Scans <= 0 {
		b.Scans = DefaultBudget.Scans
	}
	if b.Count <= 0 {
		b.Count = DefaultBudget.Count
	}
	return b
}

// FamilyRows is one family of one database: its TopN rows, most used first.
type FamilyRows struct {
	DB     int
	Family *schema.Family
	Rows   []Row
	// Keys is how many keys of the family the last complete pass saw, or
	// the running pass has seen so far when that is more.
	Keys int64
	// Cut: the family has more keys than the rows kept.
	Cut bool
}

// Top is the rank of the family's first row, for ordering families.
func (f FamilyRows) Top() (pct float64, ok bool) {
	for _, r := range f.Rows {
		if r.HasPercent() {
			return r.Percent, true
		}
	}
	return 0, false
}

// Snapshot is what the walk knows now.
type Snapshot struct {
	Conn     string
	Pack     *schema.Pack
	Families []FamilyRows
	Configs  []Row // single-key config families
	Budget   Budget
	// Pass counts completed passes; until the first completes the rows are
	// those found so far (Seen keys read).
	Pass        int
	CompletedAt time.Time
	Seen        int64 // keys the running pass has read
	Scans       int64 // SCAN calls made since the walker started
	Read        time.Time
	Err         error // the last step's error, nil when it succeeded
	Started     bool  // a step has run
}

// Walker walks one connection's shown families, budgeted, and keeps the
// most used keys of each. One Walker serves every viewer of the connection.
type Walker struct {
	conn   *redisview.Conn
	budget Budget
	now    func() time.Time
	clock  clock.Clock // WaitRead's bound (Walkers gives theirs)

	mu    sync.Mutex
	snap  Snapshot
	read  chan struct{} // closed after the first step
	once  sync.Once
	state walkState
}

// walkState is where the running pass is.
type walkState struct {
	pack   *schema.Pack
	dbs    []int // databases of the pass
	dbIdx  int
	cursor redisview.Cursor // on a cluster, one per primary
	seen   int64
	keys   map[famKey]int64
	found  map[famKey][]Row // the pass's best rows so far
	kept   map[famKey][]Row // the last complete pass's best rows, re-read each step
	counts map[famKey]int64 // the last complete pass's key counts
	// The concurrency sets of each database the last complete pass saw
	// (sets) and the running one has seen so far (setsFound), at most
	// decode.MaxConcurrencySets each; over: the pass saw more.
	sets, setsFound map[int][]string
	over, overFound map[int]bool
}

type famKey struct {
	db int
	id string
}

// NewWalker returns a walker of conn; now is its clock.
func NewWalker(conn *redisview.Conn, b Budget, now func() time.Time) *Walker {
	if now == nil {
		now = time.Now
	}
	return &Walker{conn: conn, budget: b.withDefaults(), now: now, clock: clock.Real{}, read: make(chan struct{}),
		snap: Snapshot{Conn: conn.Name}}
}

// Snapshot returns what the walk knows now.
func (w *Walker) Snapshot() Snapshot {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.snap
	s.Families = slices.Clone(s.Families)
	return s
}

// WaitRead waits up to d (of the walker's clock) for the first step to
// finish.
func (w *Walker) WaitRead(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := w.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-w.read:
	case <-t.C():
	case <-ctx.Done():
	}
}

// Step re-reads the kept rows and the config keys (one pipeline per
// database), then walks on: at most Budget.Scans SCAN calls, each followed
// by one pipelined read of the shown keys it returned.
func (w *Walker) Step(ctx context.Context) error {
	err := w.step(ctx)
	w.mu.Lock()
	w.snap.Err, w.snap.Started = err, true
	w.mu.Unlock()
	w.once.Do(func() { close(w.read) })
	return err
}

func (w *Walker) step(ctx context.Context) error {
	pack := w.conn.Pack()
	st := &w.state
	if pack != st.pack {
		*st = walkState{pack: pack}
		w.mu.Lock()
		w.snap = Snapshot{Conn: w.conn.Name, Pack: pack, Budget: w.budget, Scans: w.snap.Scans}
		w.mu.Unlock()
	}
	if pack == nil {
		return nil
	}
	now := w.now()
	// Re-read what is shown.
	configs, err := w.refresh(ctx, pack, now)
	if err != nil {
		return err
	}
	// Walk on.
	var scans int64
	finished := false
	for range w.budget.Scans {
		if st.dbs == nil {
			if st.dbs, err = w.databases(ctx, pack); err != nil {
				return err
			}
			st.dbIdx, st.cursor, st.seen = 0, redisview.CursorStart, 0
			st.keys, st.found = map[famKey]int64{}, map[famKey][]Row{}
		}
		if st.dbIdx >= len(st.dbs) {
			w.finishPass(now)
			finished = true
			break
		}
		db := st.dbs[st.dbIdx]
		c := w.conn.DB(db)
		keys, next, err := redisview.ScanStep(ctx, c, st.cursor, "*", int64(w.budget.Count), "")
		if err != nil {
			return w.conn.WrapErr(redisview.ReadError("walking the database with SCAN", err))
		}
		scans++
		if err := w.take(ctx, pack, db, keys, now); err != nil {
			return err
		}
		st.cursor = next
		if next.Done() {
			st.dbIdx++
			if st.dbIdx >= len(st.dbs) {
				w.finishPass(now)
				finished = true
				break
			}
		}
	}
	if finished {
		// The new pass's rows were read without their members: read them
		// whole now (TopN per family), so no frame shows them unchecked.
		if configs, err = w.refresh(ctx, pack, now); err != nil {
			return err
		}
	}
	w.publish(configs, scans, now)
	return nil
}

// databases lists the databases with keys (INFO keyspace) where a shown
// family lives.
func (w *Walker) databases(ctx context.Context, pack *schema.Pack) ([]int, error) {
	txts, err := redisview.InfoEach(ctx, w.conn.Client(), "keyspace") // every primary of a cluster
	if err != nil {
		return nil, w.conn.WrapErr(redisview.ReadError("INFO keyspace", err))
	}
	var dbs []int
	for db := range stats.KeyspaceOf(txts) {
		for _, f := range pack.Families {
			if Shown(f) && !IsConfig(f) && f.InDB(db) {
				dbs = append(dbs, db)
				break
			}
		}
	}
	slices.Sort(dbs)
	return dbs, nil
}

// take reads the shown keys of one SCAN reply and keeps the best.
func (w *Walker) take(ctx context.Context, pack *schema.Pack, db int, keys []string, now time.Time) error {
	st := &w.state
	cls := pack.Classifier()
	var rows []*Row
	for _, k := range keys {
		m, ok := cls.Match(db, k)
		if !ok || !Shown(m.Family) || IsConfig(m.Family) {
			continue
		}
		rows = append(rows, &Row{DB: db, Key: k, Family: m.Family, Vars: m.Vars})
	}
	st.seen += int64(len(keys))
	if err := readRows(ctx, w.conn.DB(db), pack, rows, now, false); err != nil {
		return w.conn.WrapErr(redisview.ReadError("reading quota keys", err))
	}
	for _, r := range rows {
		if r.Gone {
			continue
		}
		if r.Family.Role == schema.RoleConcurrencySet {
			st.noteSet(db, r.Key)
		}
		fk := famKey{db, r.Family.ID}
		st.keys[fk]++
		st.found[fk] = w.best(append(st.found[fk], *r))
	}
	return nil
}

// best keeps the TopN rows nearest a problem, no key twice.
func (w *Walker) best(rows []Row) []Row {
	SortRows(rows)
	seen := map[string]bool{}
	out := rows[:0]
	for _, r := range rows {
		if seen[r.Key] {
			continue
		}
		seen[r.Key] = true
		out = append(out, r)
	}
	if len(out) > w.budget.TopN {
		out = out[:w.budget.TopN]
	}
	return out
}

// noteSet records a concurrency set the running pass saw.
func (st *walkState) noteSet(db int, key string) {
	if st.setsFound == nil {
		st.setsFound, st.overFound = map[int][]string{}, map[int]bool{}
	}
	if slices.Contains(st.setsFound[db], key) {
		return
	}
	if len(st.setsFound[db]) >= decode.MaxConcurrencySets {
		st.overFound[db] = true
		return
	}
	st.setsFound[db] = append(st.setsFound[db], key)
}

// knownSets are the concurrency sets of db the walk knows: the last
// complete pass's and those the running pass found since; complete when a
// pass has completed and neither saw more than the bound.
func (st *walkState) knownSets(db int) (sets []string, complete bool) {
	sets = slices.Clone(st.sets[db])
	for _, k := range st.setsFound[db] {
		if !slices.Contains(sets, k) && len(sets) < decode.MaxConcurrencySets {
			sets = append(sets, k)
		}
	}
	complete = st.sets != nil && !st.over[db] && !st.overFound[db]
	return sets, complete
}

func (w *Walker) finishPass(now time.Time) {
	st := &w.state
	st.sets, st.over = st.setsFound, st.overFound
	if st.sets == nil {
		st.sets, st.over = map[int][]string{}, map[int]bool{}
	}
	st.setsFound, st.overFound = nil, nil
	st.kept, st.counts = st.found, st.keys
	st.dbs, st.found, st.keys = nil, map[famKey][]Row{}, map[famKey]int64{}
	w.mu.Lock()
	w.snap.Pass++
	w.snap.CompletedAt = now
	w.mu.Unlock()
}

// refresh re-reads the kept rows (checking concurrency sets' members) and
// reads the config keys.
func (w *Walker) refresh(ctx context.Context, pack *schema.Pack, now time.Time) ([]Row, error) {
	st := &w.state
	byDB := map[int][]*Row{}
	for fk, rows := range st.kept {
		for i := range rows {
			byDB[fk.db] = append(byDB[fk.db], &st.kept[fk][i])
		}
	}
	for fk, rows := range st.found {
		for i := range rows {
			byDB[fk.db] = append(byDB[fk.db], &st.found[fk][i])
		}
	}
	var configs []Row
	for _, f := range pack.Families {
		if !IsConfig(f) {
			continue
		}
		k, err := f.Key(nil)
		if err != nil {
			continue
		}
		db := 0
		if len(f.DBs) > 0 {
			db = f.DBs[0]
		}
		configs = append(configs, Row{DB: db, Key: k, Family: f})
	}
	for i := range configs {
		byDB[configs[i].DB] = append(byDB[configs[i].DB], &configs[i])
	}
	for db, rows := range byDB {
		if err := readRows(ctx, w.conn.DB(db), pack, rows, now, true); err != nil {
			return nil, w.conn.WrapErr(redisview.ReadError("re-reading quota keys", err))
		}
		sets, complete := st.knownSets(db)
		if err := checkReservations(ctx, w.conn.DB(db), pack, rows, sets, complete); err != nil {
			return nil, w.conn.WrapErr(redisview.ReadError("looking up reservations in concurrency sets", err))
		}
	}
	return configs, nil
}

// publish merges the kept and the running pass's rows into the snapshot.
func (w *Walker) publish(configs []Row, scans int64, now time.Time) {
	st := &w.state
	all := map[famKey][]Row{}
	for fk, rows := range st.kept {
		all[fk] = append(all[fk], rows...)
	}
	for fk, rows := range st.found {
		all[fk] = append(all[fk], rows...)
	}
	var fams []FamilyRows
	for fk, rows := range all {
		var live []Row
		for _, r := range rows {
			if !r.Gone {
				live = append(live, r)
			}
		}
		fr := FamilyRows{DB: fk.db, Family: st.pack.Family(fk.id), Rows: w.best(live)}
		// The last complete pass's count, or as many as the running pass
		// has seen when that is more (a family that has just appeared).
		fr.Keys = max(st.counts[fk], st.keys[fk], int64(len(fr.Rows)))
		fr.Cut = fr.Keys > int64(len(fr.Rows))
		if fr.Family != nil {
			fams = append(fams, fr)
		}
	}
	SortFamilies(fams)
	// Config counters and amounts (cfg:routing:version): a config whose
	// value is text (a description) is no budget and is left out.
	configs = slices.DeleteFunc(configs, func(r Row) bool {
		_, err := strconv.ParseInt(r.Amount, 10, 64)
		return r.Gone || r.Note != "" || err != nil
	})
	w.mu.Lock()
	w.snap.Families, w.snap.Configs = fams, configs
	w.snap.Seen = st.seen
	w.snap.Scans += scans
	w.snap.Read = now
	w.snap.Pack = st.pack
	w.snap.Budget = w.budget
	w.mu.Unlock()
}

// SortFamilies orders families by the percent used of their first row
// (families measured against a limit first), then budgets before what
// spends them (the order each budget role registers, decode.BudgetOrder),
// then by database and id.
func SortFamilies(fams []FamilyRows) {
	slices.SortStableFunc(fams, func(a, b FamilyRows) int {
		pa, oka := a.Top()
		pb, okb := b.Top()
		switch {
		case oka && !okb:
			return -1
		case !oka && okb:
			return 1
		case pa > pb:
			return -1
		case pa < pb:
			return 1
		case decode.BudgetOrder(a.Family.Role) != decode.BudgetOrder(b.Family.Role):
			return cmp.Compare(decode.BudgetOrder(a.Family.Role), decode.BudgetOrder(b.Family.Role))
		case a.DB != b.DB:
			return a.DB - b.DB
		}
		return strings.Compare(a.Family.ID, b.Family.ID)
	})
}

// String says how the rows were chosen, for the page's label.
func (b Budget) String() string {
	return "top " + strconv.Itoa(b.TopN) + " per family; walk of " + strconv.Itoa(b.Scans) + " SCAN calls of COUNT " + strconv.Itoa(b.Count) + " per step"
}
