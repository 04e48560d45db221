package stats

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/clock"
	"github.com/keydeck/keydeck/internal/lease"
	"github.com/keydeck/keydeck/internal/linger"
	"github.com/keydeck/keydeck/redisview"
)

// minPassInterval keeps a small database from being re-swept in a tight
// loop: a new pass starts at most this often.
const minPassInterval = 2 * time.Second

// Sweeper keeps per-family statistics of one database by sweeping it
// continuously within a budget. One runs per database however many pages
// show it; it starts with the first viewer and stops a while after the last.
// A new pass starts only when the database changed since the last pass
// started, or that pass is older than freshFor (see signature): a watched
// database nobody writes costs one INFO every minPassInterval.
type Sweeper struct {
	conn   *redisview.Conn
	db     int
	budget SweepBudget
	log    *slog.Logger
	clock  clock.Clock

	mu     sync.Mutex
	cur    *dbAccumulator
	last   *dbAccumulator // latest completed pass
	passes int
	// live keeps the counts current between passes from keyspace events
	// (eventcount.go); nil where this process does not sweep (a replica
	// showing another's passes).
	live *liveCounts
	// liveSkip is set (to the last pass's end) while passes are skipped
	// because the live counts have not drifted.
	liveSkip time.Time
	// hour is the completed passes of the last hour (famtrend.go).
	hour   famTrend
	err    string
	memWhy string
	// lastSig is the database's signature as the last completed pass
	// started; unchanged is set (to that pass's start) while passes are
	// skipped because nothing changed since.
	lastSig   signature
	unchanged time.Time
	// read is closed once the first batch is read (or fails), so a page
	// opened as the sweeper starts shows figures, not an empty frame.
	read     chan struct{}
	readOnce sync.Once

	// share is the audit Redis replicas share (nil: on its own); the
	// rest is this sweeper's side of it (sweepshare.go), used by its run
	// goroutine only.
	share     *lease.Shared
	noRelease bool
	leased    atomic.Pointer[lease.Lease] // its lease, once shared() made it (read by tests too)
	published time.Time                   // when the status was last written
}

func (s *Sweeper) markRead() { s.readOnce.Do(func() { close(s.read) }) }

// WaitRead waits up to d for the sweeper's first batch (or its first
// failure): a page rendered right after Acquire then shows figures. It
// returns at once when a pass is already known.
func (s *Sweeper) WaitRead(ctx context.Context, d time.Duration) {
	t := s.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-s.read:
	case <-ctx.Done():
	case <-t.C():
	}
}

// fresh starts a pass from nothing on the connection's current client.
func (s *Sweeper) fresh() (redis.UniversalClient, *keySweep) {
	cl := s.conn.DB(s.db)
	ks := newKeySweep(s.conn, cl, s.budget.Count)
	s.mu.Lock()
	s.cur = newAccumulator(s.clock.Now(), s.budget.Sample)
	s.mu.Unlock()
	return cl, ks
}

// run sweeps the database until ctx ends: itself, or, where replicas
// share an audit Redis, while this process holds the database's lease,
// showing the holder's published passes meanwhile (see sweepshare.go).
func (s *Sweeper) run(ctx context.Context) {
	if s.share == nil {
		s.sweep(ctx)
		return
	}
	s.shared(ctx)
}

// sweep is the sweep itself: pass after pass until ctx ends.
func (s *Sweeper) sweep(ctx context.Context) {
	live := newLiveCounts(s.db, s.conn.Classifier, s.clock)
	s.mu.Lock()
	s.live = live
	s.mu.Unlock()
	defer live.Follow(s.conn)()
	cl, ks := s.fresh()
	starting := true
	var passSig signature // as the running pass started
	for ctx.Err() == nil {
		// The connection may have moved onto another client (a cluster
		// detected after the sweep started closes the standalone ones):
		// the pass starts again on the client it has now.
		if s.conn.DB(s.db) != cl {
			cl, ks = s.fresh()
			starting = true
		}
		if starting {
			sig, run := s.startPass(ctx, cl)
			if !run {
				continue
			}
			passSig, starting = sig, false
		}
		t0 := s.clock.Now()
		cls := s.conn.Classifier()
		batch, done, err := ks.step(ctx, func(keys []string) []readLevel {
			s.mu.Lock()
			defer s.mu.Unlock()
			return s.cur.plan(s.db, keys, cls)
		})
		if errors.Is(err, errPassRestarted) {
			s.mu.Lock()
			s.cur = newAccumulator(s.clock.Now(), s.budget.Sample)
			s.mu.Unlock()
			starting = true
			continue
		}
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			s.fail(ctx, err)
			continue
		}
		cost := batchCost(batch)
		s.mu.Lock()
		s.err = ""
		s.memWhy = ks.mem.Why
		s.cur.cost += cost
		for _, k := range batch {
			s.cur.add(s.db, k, cls)
		}
		var passStart time.Time
		if done {
			s.cur.finished = s.clock.Now()
			passStart = s.cur.started
			s.last, s.cur = s.cur, newAccumulator(s.clock.Now(), s.budget.Sample)
			s.lastSig = passSig
			s.passes++
			s.hour.add(s.last.finished, s.last.fams, ks.mem.Why == "")
			live.Reset() // the deltas count from the pass's end
			starting = true
		}
		s.mu.Unlock()
		s.shown(ctx, done)

		wait := s.budget.stepWait(max(len(batch), 1), cost, s.clock.Since(t0))
		if done {
			wait = max(wait, minPassInterval-s.clock.Since(passStart))
		}
		if wait > 0 {
			s.sleep(ctx, wait)
		}
	}
}

// startPass decides whether a new pass runs: only when the last one is
// stale or the database changed since it started (see signature). When
// it does not (or the signature could not be read), it has waited or
// failed already and the caller tries again.
func (s *Sweeper) startPass(ctx context.Context, cl redis.UniversalClient) (signature, bool) {
	sig, err := readSignature(ctx, cl, s.db)
	if err != nil {
		if ctx.Err() != nil {
			return sig, false
		}
		if redisview.IsConnErr(err) {
			s.fail(ctx, err)
			return sig, false
		}
		sig = signature{} // INFO refused: never skip a pass
	}
	s.mu.Lock()
	if s.last != nil && sig.ok && sig == s.lastSig && s.clock.Since(s.last.finished) < freshFor {
		s.unchanged = s.last.started
		// Nothing changed since that pass: its figures hold now too.
		s.hour.add(s.clock.Now(), s.last.fams, s.memWhy == "")
		s.err = ""
		s.mu.Unlock()
		s.shown(ctx, false)
		s.sleep(ctx, minPassInterval)
		return sig, false
	}
	if s.last != nil && sig.ok && s.liveFresh(sig) {
		s.unchanged = time.Time{}
		s.liveSkip = s.last.finished
		s.err = ""
		s.mu.Unlock()
		s.shown(ctx, false)
		s.sleep(ctx, minPassInterval)
		return sig, false
	}
	s.liveSkip = time.Time{}
	s.unchanged = time.Time{}
	s.cur.started = s.clock.Now()
	s.mu.Unlock()
	return sig, true
}

// shown marks what the sweeper holds as read — a pass done, a batch, a
// failure, nothing changed — and publishes it to the other replicas.
func (s *Sweeper) shown(ctx context.Context, done bool) {
	s.markRead()
	s.publish(ctx, done)
}

// fail records a failed read and waits a second before the next try.
func (s *Sweeper) fail(ctx context.Context, err error) {
	s.mu.Lock()
	s.err = s.conn.SafeErr(err)
	s.mu.Unlock()
	s.shown(ctx, false)
	s.sleep(ctx, time.Second)
}

func (s *Sweeper) sleep(ctx context.Context, d time.Duration) { clock.Sleep(ctx, s.clock, d) }

// Detail returns the statistics: the latest completed pass, or while the
// first pass runs, the partial pass scaled to total (labelled estimated).
func (s *Sweeper) Detail(total redisview.Opt[int64]) DBDetail {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := DBDetail{Conn: s.conn.Name, DB: s.db, TotalKeys: total, Budget: s.budget, Pass: s.passes, Err: s.err, MemoryWhy: s.memWhy,
		ReadPath: "pipelines", UnchangedSince: s.unchanged, Hour: s.hour.copy()}
	if p := s.conn.Pack(); p != nil {
		d.Pack = p.Name
	}
	tot := int64(0)
	if total.OK {
		tot = total.V
	}
	switch {
	case s.last != nil:
		s.last.detail(&d, tot, false)
		d.CompletedAt = s.last.finished
		d.CPU = s.budget.cpuShare(s.last.cost, s.last.finished.Sub(s.last.started))
		if s.cur != nil {
			d.Seen = s.cur.seen
			if s.cur.seen > 0 && s.unchanged.IsZero() {
				d.CPU = s.budget.cpuShare(s.cur.cost, s.clock.Since(s.cur.started))
			}
		}
	case s.cur != nil:
		s.cur.detail(&d, tot, true)
		d.Seen = s.cur.seen
		d.CPU = s.budget.cpuShare(s.cur.cost, s.clock.Since(s.cur.started))
	}
	s.liveDetail(&d)
	return d
}

// Sweepers owns the running sweepers, one per connection and database.
type Sweepers struct {
	budget SweepBudget
	log    *slog.Logger
	clock  clock.Clock
	pool   *linger.Pool[sweepKey, *Sweeper]

	// recent is the last completed pass of each database whose sweeper
	// stopped; a sweeper started within recentFor shows it until its own
	// first pass completes. It is changed under the pool's lock (a sweeper
	// starting or stopping), then under mu.
	mu     sync.Mutex
	recent map[sweepKey]keptPass

	// share: replicas sharing an audit Redis sweep each database once
	// (WithShare); noRelease (tests) leaves the lease to expire on stop,
	// as a process that died would.
	share     *lease.Shared
	noRelease bool
}

type keptPass struct {
	last   *dbAccumulator
	sig    signature
	passes int
	hour   []FamilyPass // the sweeper's hour (famtrend.go), the pool's own copy
}

// recentFor is how old a stopped sweeper's pass may be and still be shown
// (with its completion time) when the database's page opens again.
const recentFor = 10 * time.Minute

type sweepKey struct {
	conn string
	db   int
}

// Option sets up the sweepers.
type Option func(*Sweepers)

// WithClock runs the pool and its sweepers on c (the wall clock without).
func WithClock(c clock.Clock) Option { return func(p *Sweepers) { p.clock = c } }

// NewSweepers makes the pool. A sweeper keeps running for linger after its
// last viewer leaves, so flipping between pages does not restart a pass.
func NewSweepers(ctx context.Context, budget SweepBudget, lingerFor time.Duration, log *slog.Logger, opts ...Option) *Sweepers {
	if budget.KeysPerSec <= 0 {
		budget.KeysPerSec = DefaultSweepBudget.KeysPerSec
	}
	if budget.Count <= 0 {
		budget.Count = DefaultSweepBudget.Count
	}
	p := &Sweepers{budget: budget, log: log, recent: map[sweepKey]keptPass{}}
	for _, o := range opts {
		o(p)
	}
	p.clock = clock.Or(p.clock)
	p.pool = linger.New(ctx, lingerFor, p.clock, linger.Hooks[sweepKey, *Sweeper]{
		Run:     func(ctx context.Context, _ sweepKey, s *Sweeper) { s.run(ctx) },
		Stopped: p.keep,
	})
	return p
}

// Budget is the budget each sweeper runs with.
func (p *Sweepers) Budget() SweepBudget { return p.budget }

// Acquire returns the sweeper of c's database db, starting it if needed.
// Call release when done with it.
func (p *Sweepers) Acquire(c *redisview.Conn, db int) (s *Sweeper, release func()) {
	k := sweepKey{c.Name, db}
	return p.pool.Acquire(k, func() *Sweeper {
		s := &Sweeper{conn: c, db: db, budget: p.budget, log: p.log, clock: p.clock, read: make(chan struct{}),
			share: p.share, noRelease: p.noRelease}
		p.mu.Lock()
		defer p.mu.Unlock()
		if kp, ok := p.recent[k]; ok && p.clock.Since(kp.last.finished) <= recentFor {
			s.last, s.lastSig, s.passes = kp.last, kp.sig, kp.passes
			// The sweeper's own copy: kp.hour is never changed once kept
			// (Known may be reading it).
			s.hour = famTrend{passes: (&famTrend{passes: kp.hour}).copy()}
			s.markRead()
		}
		delete(p.recent, k)
		return s
	})
}

// keep remembers the last pass of a sweeper that stopped.
func (p *Sweepers) keep(k sweepKey, s *Sweeper) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.recent[k] = keptPass{s.last, s.lastSig, s.passes, s.hour.copy()}
}

// Running is the number of sweepers running now.
func (p *Sweepers) Running() int { return p.pool.Running() }

// Wait blocks until every sweeper has stopped (after the pool's ctx ends).
func (p *Sweepers) Wait() { p.pool.Wait() }

// TotalKeys is the authoritative key count of one database: INFO keyspace,
// or DBSIZE where the server's INFO has no keyspace section.
func TotalKeys(ctx context.Context, c *redisview.Conn, db int) redisview.Opt[int64] {
	cl := c.DB(db)
	if c.IsCluster() {
		// INFO is one node's; a cluster client's DBSIZE sums the primaries.
		return dbSize(cl.DBSize(ctx))
	}
	txt, err := cl.Info(ctx, "keyspace").Result()
	if err == nil {
		info := ParseInfo(txt)
		if info.Has("keyspace") {
			return redisview.Some(info.Keyspace()[db].Keys)
		}
	} else if redisview.IsConnErr(err) {
		return redisview.None[int64](c.SafeErr(err))
	}
	return dbSize(cl.DBSize(ctx))
}

func dbSize(cmd *redis.IntCmd) redisview.Opt[int64] {
	n, err := cmd.Result()
	if err != nil {
		return redisview.None[int64](redisview.Refusal("DBSIZE", err))
	}
	return redisview.Some(n)
}

// Known returns what the pool holds of one database without reading it —
// the latest completed pass of its running sweeper, or of one stopped
// within recentFor — and false when no pass has completed: a count
// nobody has read is not zero. Pages that only summarise (the overview's
// violation counts and families' hour) use it, so that opening them sweeps
// nothing. Its Hour is the passes this process kept of the last hour.
func (p *Sweepers) Known(conn string, db int) (DBDetail, bool) {
	k := sweepKey{conn, db}
	s, running := p.pool.Get(k)
	p.mu.Lock()
	kp, recent := p.recent[k]
	p.mu.Unlock()
	d := DBDetail{Conn: conn, DB: db}
	if running {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.last == nil {
			return d, false
		}
		kp, recent = keptPass{s.last, s.lastSig, s.passes, nil}, true
		d.MemoryWhy, d.ReadPath, d.Err = s.memWhy, "pipelines", s.err
		d.Hour = s.hour.copy()
	}
	if !recent || (!running && p.clock.Since(kp.last.finished) > recentFor) {
		return d, false
	}
	kp.last.detail(&d, kp.last.seen, false)
	d.Pass, d.CompletedAt = kp.passes, kp.last.finished
	if !running {
		d.Hour = (&famTrend{passes: kp.hour}).copy()
	}
	return d, true
}
