package limits

import (
	"context"
	"strings"
	"time"

	"github.com/keydeck/keydeck/internal/clock"
	"github.com/keydeck/keydeck/internal/linger"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/schema"
)

// maxCandidates bounds the lock keys remembered from notifications
// between two refreshes.
const maxCandidates = 10000

// watchKeyspace follows keyspace notifications while the server publishes
// them, remembering lock keys the sweep has not read: at the next refresh
// one that is gone is counted as a short lock.
func (s *Sweeper) watchKeyspace(ctx context.Context) {
	var stop []context.CancelFunc
	defer func() {
		for _, c := range stop {
			c()
		}
	}()
	watching := false
	for ctx.Err() == nil {
		on, why := s.keyspaceOn(ctx)
		s.mu.Lock()
		if on && !s.keyspace.On {
			s.keyspace.Since = s.clock.Now()
		}
		s.keyspace.On, s.keyspace.Why = on, why
		s.mu.Unlock()
		switch {
		case on && !watching:
			watching = true
			wctx, cancel := context.WithCancel(ctx)
			stop = append(stop, cancel)
			go s.conn.WatchKeyspace(wctx, s.notified)
		case !on && watching:
			watching = false
			for _, c := range stop {
				c()
			}
			stop = nil
		}
		// Off: re-read every second (the sweep is live interest), so that
		// counting starts within about a second of an operator turning them
		// on. The connection shares its reads among its watchers and asks a
		// server that refused CONFIG GET again only after
		// redisview.KeyspaceIdleRecheck.
		if on {
			s.sleep(ctx, 30*time.Second)
		} else {
			s.sleep(ctx, redisview.KeyspaceOffRecheck)
		}
	}
}

func (s *Sweeper) keyspaceOn(ctx context.Context) (bool, string) {
	v, refused, err := s.conn.KeyspaceFlags(ctx)
	switch {
	case err != nil:
		return false, "notify-keyspace-events could not be read (" + s.conn.SafeErr(err) + ")"
	case refused != "":
		return false, "whether keyspace notifications are on is unknown: " + refused
	}
	// K: keyspace channels; with g (DEL) and x (expired), or A (all).
	if strings.Contains(v, "K") && (strings.Contains(v, "A") || strings.Contains(v, "g") && strings.Contains(v, "x")) {
		return true, ""
	}
	if v == "" {
		return false, "keyspace notifications are off (notify-keyspace-events is empty)"
	}
	return false, "notify-keyspace-events is \"" + v + "\", without keyspace events for DEL and expiry (K with g and x, or A)"
}

func (s *Sweeper) notified(db int, key string) {
	cls := s.conn.Classifier()
	if cls == nil {
		return
	}
	f, ok := cls.Classify(db, key)
	if !ok || decode.ClassOf(f) != decode.ClassLock {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, fm := range s.fams {
		if fm.fam == f && fm.db == db {
			if _, kept := fm.rows[key]; kept {
				return
			}
		}
	}
	if len(s.cands) < maxCandidates {
		s.cands[candKey{db, key}] = struct{}{}
	}
}

// checkCandidates reads the notified lock keys: one still held is kept
// like a swept one, one already gone was a short lock.
func (s *Sweeper) checkCandidates(ctx context.Context, cands []candKey) (int, error) {
	if len(cands) == 0 {
		return 0, nil
	}
	cls := s.conn.Classifier()
	byDB := map[int][]*Row{}
	for _, c := range cands {
		if cls == nil {
			break
		}
		m, ok := cls.Match(c.db, c.key)
		if !ok {
			continue
		}
		byDB[c.db] = append(byDB[c.db], &Row{DB: c.db, Key: c.key, Family: m.Family, Vars: m.Vars})
	}
	n := 0
	for db, rows := range byDB {
		if err := readRows(ctx, s.conn.DB(db), rows, s.clock.Now()); err != nil {
			return n, err
		}
		n += len(rows)
		s.mu.Lock()
		for _, r := range rows {
			delete(s.cands, candKey{r.DB, r.Key})
			if r.PTTL == -2 {
				s.keyspace.ShortLocks++
				continue
			}
			for _, f := range s.fams {
				if f.fam == r.Family && f.db == r.DB {
					s.keep(f, r)
				}
			}
		}
		s.mu.Unlock()
	}
	return n, nil
}

// Snapshot is what the sweep knows now.
type Snapshot struct {
	Pack     *schema.Pack
	Started  time.Time
	Err      string
	Budget   Budget
	Families []FamilySnap // in the pack's order, then by database
	Keyspace Keyspace
}

// FamilySnap is one family in one database.
type FamilySnap struct {
	Family *schema.Family
	DB     int
	Class  decode.Class // limit or lock: the page it is on
	Rows   []Row        // the kept rows, unsorted
	Total  int64        // keys found by the last completed pass; -1 before one completed
	Seen   int64        // found so far by the running pass
	Passes int
	// Read: the sweep has scanned the family at least once. Before that its
	// rows are not known, which is not the same as none.
	Read bool
}

// Snapshot copies the sweep's rows.
func (s *Sweeper) Snapshot() Snapshot {
	s.families()
	s.mu.Lock()
	defer s.mu.Unlock()
	out := Snapshot{Pack: s.pack, Started: s.started, Err: s.err, Budget: s.budget, Keyspace: s.keyspace}
	for _, f := range s.fams {
		fs := FamilySnap{Family: f.fam, DB: f.db, Class: decode.ClassOf(f.fam), Total: f.total, Seen: f.seen, Passes: f.passes, Read: f.read}
		for _, r := range f.rows {
			fs.Rows = append(fs.Rows, *r)
		}
		out.Families = append(out.Families, fs)
	}
	return out
}

// Pool owns the running sweepers, one per connection however many pages
// show it; a sweeper starts with its first viewer and stops linger after
// its last.
type Pool struct {
	budget Budget
	clock  clock.Clock
	pool   *linger.Pool[string, *Sweeper]
}

// Option sets up a pool.
type Option func(*Pool)

// WithClock runs the pool and its sweepers on c (the wall clock without).
func WithClock(c clock.Clock) Option { return func(p *Pool) { p.clock = c } }

// NewPool makes the pool; its sweepers stop when ctx ends.
func NewPool(ctx context.Context, b Budget, lingerFor time.Duration, opts ...Option) *Pool {
	p := &Pool{budget: b.withDefaults()}
	for _, o := range opts {
		o(p)
	}
	p.clock = clock.Or(p.clock)
	p.pool = linger.New(ctx, lingerFor, p.clock, linger.Hooks[string, *Sweeper]{
		Run: func(ctx context.Context, _ string, s *Sweeper) { s.run(ctx) },
	})
	return p
}

// Acquire returns c's sweeper, starting it if needed. Call release when
// done with it.
func (p *Pool) Acquire(c *redisview.Conn) (s *Sweeper, release func()) {
	return p.pool.Acquire(c.Name, func() *Sweeper { return newSweeper(c, p.budget, p.clock) })
}

// Running is the number of sweepers running now.
func (p *Pool) Running() int { return p.pool.Running() }

// Wait blocks until every sweeper has stopped (after the pool's ctx ends).
func (p *Pool) Wait() { p.pool.Wait() }
