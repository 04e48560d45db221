package limits

import (
	"context"
	"sync"
	"time"

	"github.com/keydeck/keydeck/internal/clock"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/schema"
)

// Budget bounds what the sweep costs the server.
type Budget struct {
	// KeysPerSec is the average rate of keys examined by SCAN plus keys
	// read (kept rows re-read included).
	KeysPerSec int
	Count      int           // SCAN COUNT per step
	Keep       int           // rows kept per family and database: the most constrained
	Refresh    time.Duration // kept rows are re-read this often
}

// DefaultBudget: 10,000 keys/s in SCAN steps of 200 (COUNT 1000 took 4 ms
// on a 1,000,000-key database), the 50 most constrained rows of each
// family re-read every 2 s.
var DefaultBudget = Budget{KeysPerSec: 10000, Count: 200, Keep: 50, Refresh: 2 * time.Second}

func (b Budget) withDefaults() Budget {
	if b.KeysPerSec <= 0 {
		b.KeysPerSec = DefaultBudget.KeysPerSec
	}
	if b.Count <= 0 {
		b.Count = DefaultBudget.Count
	}
	if b.Keep <= 0 {
		b.Keep = DefaultBudget.Keep
	}
	if b.Refresh <= 0 {
		b.Refresh = DefaultBudget.Refresh
	}
	return b
}

// family is one family in one database, as the sweep walks it.
type family struct {
	fam    *schema.Family
	db     int
	match  string           // SCAN MATCH: the literal prefix, escaped, then *
	cursor redisview.Cursor // on a cluster, one per primary
	seen   int64            // keys of the family found in the running pass
	total  int64            // found in the last completed pass; -1 before one completed
	passes int
	read   bool // scanned at least once: what it found so far is in rows
	rows   map[string]*Row
}

// Sweeper keeps one connection's rate-limit and lock rows.
type Sweeper struct {
	conn   *redisview.Conn
	budget Budget
	clock  clock.Clock

	mu       sync.Mutex
	pack     *schema.Pack
	fams     []*family
	next     int
	err      string
	started  time.Time
	keyspace Keyspace
	cands    map[candKey]struct{} // lock keys notified, not yet read

	read     chan struct{}
	readOnce sync.Once
}

type candKey struct {
	db  int
	key string
}

// Keyspace says whether locks shorter than the sweep are counted.
type Keyspace struct {
	On         bool   // keyspace notifications are enabled: short locks are counted
	Why        string // when off: why (the setting, or CONFIG refused)
	ShortLocks int64  // locks that appeared and vanished between two reads
	Since      time.Time
}

func newSweeper(c *redisview.Conn, b Budget, clk clock.Clock) *Sweeper {
	return &Sweeper{conn: c, budget: b.withDefaults(), clock: clock.Or(clk), read: make(chan struct{}), cands: map[candKey]struct{}{}}
}

func (s *Sweeper) markRead() { s.readOnce.Do(func() { close(s.read) }) }

// WaitRead waits up to d (of the sweep's clock) for the sweep's first
// round over every family.
func (s *Sweeper) WaitRead(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := s.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-s.read:
	case <-ctx.Done():
	case <-t.C():
	}
}

// Read is closed once the sweep has read every family of the connection's
// pack once (or failed trying; or the pack has none): a live view waiting
// for its first rows can be refreshed then. Before the connection has a
// pack it stays open.
func (s *Sweeper) Read() <-chan struct{} { return s.read }

// Budget is the sweep's budget.
func (s *Sweeper) Budget() Budget { return s.budget }

// families rebuilds the walk when the connection's pack changed.
func (s *Sweeper) families() []*family {
	p := s.conn.Pack()
	s.mu.Lock()
	defer s.mu.Unlock()
	if p == s.pack && s.fams != nil {
		return s.fams
	}
	s.pack, s.fams, s.next = p, []*family{}, 0
	if p == nil {
		return s.fams
	}
	for _, f := range p.Families {
		if !swept(f) {
			continue
		}
		dbs := f.DBs
		if dbs == nil {
			dbs = p.SampleDBs()
		}
		for _, db := range dbs {
			s.fams = append(s.fams, &family{fam: f, db: db, total: -1, rows: map[string]*Row{},
				match: schema.EscapeGlob(f.Pattern.LiteralPrefix()) + "*"})
		}
	}
	return s.fams
}

func (s *Sweeper) run(ctx context.Context) {
	s.mu.Lock()
	s.started = s.clock.Now()
	s.mu.Unlock()
	// A running sweep is live interest in keyspace events (short locks).
	defer s.conn.WantKeyspace()()
	go s.watchKeyspace(ctx)
	var lastRefresh time.Time
	for ctx.Err() == nil {
		t0 := s.clock.Now()
		fams := s.families()
		if len(fams) == 0 {
			// A pack without limits or locks has nothing to read: read.
			// No pack yet (detection still sampling) is not read at all:
			// Read stays open until a round with the pack.
			s.mu.Lock()
			havePack := s.pack != nil
			s.mu.Unlock()
			if havePack {
				s.markRead()
			}
			s.sleep(ctx, time.Second)
			continue
		}
		cost := 0
		var err error
		if s.clock.Since(lastRefresh) >= s.budget.Refresh {
			lastRefresh = s.clock.Now()
			var n int
			n, err = s.refresh(ctx)
			cost += n
		}
		if err == nil {
			s.mu.Lock()
			f := fams[s.next%len(fams)]
			s.next++
			roundDone := s.next%len(fams) == 0
			s.mu.Unlock()
			var n int
			n, err = s.step(ctx, f)
			cost += n
			if roundDone && err == nil {
				s.markRead() // every family read once: a page may render
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			s.mu.Lock()
			s.err = s.conn.SafeErr(err)
			s.mu.Unlock()
			s.markRead()
			s.sleep(ctx, time.Second)
			continue
		}
		s.mu.Lock()
		s.err = ""
		s.mu.Unlock()
		wait := time.Duration(max(cost, 1))*time.Second/time.Duration(s.budget.KeysPerSec) - s.clock.Since(t0)
		if wait > 0 {
			s.sleep(ctx, wait)
		}
	}
}

// step is one SCAN of one family, then one pipelined read of the keys it
// found. It returns the keys examined plus the keys read.
func (s *Sweeper) step(ctx context.Context, f *family) (int, error) {
	cl := s.conn.DB(f.db)
	keys, cursor, err := redisview.ScanStep(ctx, cl, f.cursor, f.match, int64(s.budget.Count), "")
	if err != nil {
		return 0, err
	}
	cls := s.conn.Classifier()
	var rows []*Row
	for _, k := range keys {
		if cls == nil {
			break
		}
		m, ok := cls.Match(f.db, k)
		if !ok || m.Family != f.fam {
			continue
		}
		rows = append(rows, &Row{DB: f.db, Key: k, Family: f.fam, Vars: m.Vars})
	}
	if err := readRows(ctx, cl, rows, s.clock.Now()); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	f.seen += int64(len(rows))
	f.cursor = cursor
	f.read = true
	if cursor.Done() {
		f.total, f.seen = f.seen, 0
		f.passes++
	}
	for _, r := range rows {
		if r.PTTL == -2 { // gone between SCAN and the read
			continue
		}
		s.keep(f, r)
	}
	return s.budget.Count + len(rows), nil
}

// keep adds r to its family's rows, evicting the least constrained row
// when the family already keeps Keep rows. Called with s.mu held.
func (s *Sweeper) keep(f *family, r *Row) {
	delete(s.cands, candKey{r.DB, r.Key})
	if _, ok := f.rows[r.Key]; ok || len(f.rows) < s.budget.Keep {
		f.rows[r.Key] = r
		return
	}
	now := s.clock.Now()
	sev := r.At(now).Severity()
	var least *Row
	leastSev := 0.0
	for _, o := range f.rows {
		if v := o.At(now).Severity(); least == nil || v < leastSev {
			least, leastSev = o, v
		}
	}
	if sev > leastSev {
		delete(f.rows, least.Key)
		f.rows[r.Key] = r
	}
}

// refresh re-reads every kept row (and the lock keys notified since the
// last refresh): a key that is gone leaves the page within Refresh.
func (s *Sweeper) refresh(ctx context.Context) (int, error) {
	type job struct {
		f    *family
		rows []*Row
	}
	s.mu.Lock()
	byDB := map[int][]job{}
	var cands []candKey
	for k := range s.cands {
		cands = append(cands, k)
	}
	for _, f := range s.fams {
		if len(f.rows) == 0 {
			continue
		}
		j := job{f: f}
		for _, r := range f.rows {
			j.rows = append(j.rows, &Row{DB: r.DB, Key: r.Key, Family: r.Family, Vars: r.Vars})
		}
		byDB[f.db] = append(byDB[f.db], j)
	}
	s.mu.Unlock()
	cost := 0
	for db, jobs := range byDB {
		var all []*Row
		for _, j := range jobs {
			all = append(all, j.rows...)
		}
		if err := readRows(ctx, s.conn.DB(db), all, s.clock.Now()); err != nil {
			return cost, err
		}
		cost += len(all)
		s.mu.Lock()
		for _, j := range jobs {
			for _, r := range j.rows {
				if r.PTTL == -2 {
					delete(j.f.rows, r.Key)
				} else if _, ok := j.f.rows[r.Key]; ok {
					j.f.rows[r.Key] = r
				}
			}
		}
		s.mu.Unlock()
	}
	n, err := s.checkCandidates(ctx, cands)
	return cost + n, err
}

func (s *Sweeper) sleep(ctx context.Context, d time.Duration) { clock.Sleep(ctx, s.clock, d) }
