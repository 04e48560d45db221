package search

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/redisview/stats"
)

// Limits bound one request of a search.
type Limits struct {
	Calls int           // SCAN calls of one scan per request
	Count int64         // COUNT of each SCAN call
	Cap   int           // keys listed at most; the search stops when it is reached
	Time  time.Duration // all the scans of a request (of a Session's step)
	// Total bounds a Session: it stops once its scans have looked at
	// about this many keys (calls × COUNT); 0: no bound.
	Total int64
	// Budget paces the scans: each SCAN call first takes COUNT keys from
	// it, waiting at most until the request's (step's) time is up; nil:
	// not paced.
	Budget Budget
}

// Budget is the connection's scan budget as one identity's scans see it
// (scanbudget.Tap): Take returns once keys more may be scanned, or with
// ctx's error, having taken nothing.
type Budget interface {
	Take(ctx context.Context, keys int64) error
}

// DefaultLimits: 250 SCAN calls × COUNT 200 (about 50,000 keys) per
// database per request, at most 200 keys found, 2 seconds. COUNT stays at
// 200 so that one SCAN with MATCH stays under 2 ms on a big database (at
// COUNT 1000 bench-search saw 4 ms).
var DefaultLimits = Limits{Calls: 250, Count: 200, Cap: 200, Time: 2 * time.Second}

// LiveLimits bound a live search's Session: each step (one tick of the
// page's topic) at most 100 SCAN calls × COUNT 200 (about 20,000 keys) per
// database for at most half a second; the whole search at most 200 keys
// found and 2,000,000 keys scanned.
var LiveLimits = Limits{Calls: 100, Count: 200, Cap: 200, Time: 500 * time.Millisecond, Total: 2_000_000}

// Hit is one key found.
type Hit struct {
	DB     int
	Key    string
	Family *schema.Family // nil: no family of the pack
	Type   string
	TTL    time.Duration // -1: no TTL
	Scan   bool          // found by a scan; false: derived from the value
}

// ScanState is how far one scan got.
type ScanState struct {
	Scan
	DBKeys   int64 // keys in the database (INFO keyspace)
	Calls    int   // SCAN calls this request (of a Session: so far)
	Examined int64 // keys looked at, about: calls × COUNT (or the keys SCAN returned, when more), at most DBKeys; DBKeys once Done
	Returned int64 // keys SCAN returned (MATCH applied)
	Found    int
	Cursor   redisview.Cursor // where a continue starts (on a cluster one per primary); "" or "0" when Done
	Done     bool             // the cursor came back to 0 (on this request or an earlier one)
	Earlier  bool             // finished on an earlier request (a continue does not repeat it)
	Started  bool             // false: the cap or the time budget stopped the search first
}

// Result is one request's answer.
type Result struct {
	Query    Query
	Keyspace map[int]int64 // keys per database with keys
	Hits     []Hit
	Checked  int // exact keys checked (derived)
	Scans    []ScanState
	Skipped  int // families the value cannot fill
	Absent   int // families in no database with keys
	Capped   bool
	// Dropped counts keys the SCAN call that reached the cap returned past
	// it: matched, not listed, and not returned again by a continue.
	Dropped  int
	TimedOut bool
	// Budget: a Session stopped after Limits.Total keys scanned.
	Budget bool
	// Waiting: the request (a Session's step) stopped waiting for the
	// connection's scan budget (Limits.Budget); the scans go on from
	// there.
	Waiting bool
	// Scanned: keys the scans looked at, about (the sum of their Examined).
	Scanned int64
	// Continued: a continue request; derived keys were checked on the first.
	Continued bool
	// FamilyDBs: for a family id, its databases (those the pack names, or
	// every database with keys for a family of any database).
	FamilyDBs []int
	// Commands issued by this request (INFO, pipelines' commands, SCANs);
	// of a Session, by its last step.
	Commands int

	seen map[hitKey]bool // keys listed, so a key SCAN returns twice is listed once
}

type hitKey struct {
	db  int
	key string
}

// Run answers q on conn. cursors is nil on a first request, else the
// scans to continue (ParseCursors); scans it does not name are done.
func Run(ctx context.Context, conn *redisview.Conn, q Query, cursors map[string]redisview.Cursor, lim Limits) (Result, error) {
	s := newSession(conn, q, lim, cursors)
	return s.Step(ctx)
}

// Session is a search run in slices: its first Step reads the keyspace and
// checks the derived keys, and every Step runs at most lim.Calls SCAN
// calls per unfinished scan (for at most lim.Time), adding what they find,
// until every scan is done, the cap is reached or lim.Total keys have been
// scanned. A live search page steps one session per tick; its result keeps
// every key once. Steps must not overlap.
type Session struct {
	conn    *redisview.Conn
	lim     Limits
	cursors map[string]redisview.Cursor
	r       Result
	plan    Plan
	cls     *schema.Classifier
	started bool
	done    bool
	from    int  // r.Hits[from:] are not described yet
	pending bool // a step is under way or failed before describing r.Hits[from:]
}

// NewSession starts a search that Step runs slice by slice.
func NewSession(conn *redisview.Conn, q Query, lim Limits) *Session {
	return newSession(conn, q, lim, nil)
}

func newSession(conn *redisview.Conn, q Query, lim Limits, cursors map[string]redisview.Cursor) *Session {
	return &Session{conn: conn, lim: lim, cursors: cursors, r: Result{Query: q, Continued: cursors != nil}}
}

// Done: every scan finished, the cap or the total budget reached; a
// further Step reads nothing.
func (s *Session) Done() bool { return s.done }

// Step runs one slice and returns the search so far (Commands counts this
// step's). After an error the session may be stepped again: the slice that
// failed is retried.
func (s *Session) Step(ctx context.Context) (Result, error) {
	r := &s.r
	r.Commands, r.TimedOut, r.Waiting = 0, false, false
	if s.done {
		return s.result(), nil
	}
	if !s.started {
		if err := s.start(ctx); err != nil {
			return s.result(), err
		}
	}
	// A step ends by its time budget, or halfway to ctx's deadline (a
	// live topic's poll timeout), whichever is sooner.
	deadline := time.Now().Add(s.lim.Time)
	if d, ok := ctx.Deadline(); ok {
		if half := time.Now().Add(time.Until(d) / 2); half.Before(deadline) {
			deadline = half
		}
	}
	if !s.pending {
		s.from = len(r.Hits)
	}
	// Hits a failed step found but could not describe are described by
	// the next.
	s.pending = true
	for i := range r.Scans {
		st := &r.Scans[i]
		if st.Done || r.Capped || r.TimedOut || r.Budget || r.Waiting {
			continue
		}
		if err := r.scan(ctx, s.conn, s.cls, st, s.lim, deadline); err != nil {
			return s.result(), err
		}
	}
	if err := r.describe(ctx, s.conn, s.from); err != nil {
		return s.result(), err
	}
	s.pending = false
	slices.SortStableFunc(r.Hits, func(a, b Hit) int {
		if a.DB != b.DB {
			return a.DB - b.DB
		}
		if c := strings.Compare(famID(a.Family), famID(b.Family)); c != 0 {
			return c
		}
		return strings.Compare(a.Key, b.Key)
	})
	s.done = r.Capped || r.Budget
	if !s.done {
		s.done = true
		for _, st := range r.Scans {
			s.done = s.done && st.Done
		}
	}
	return s.result(), nil
}

// result is a copy the caller may keep while the session goes on.
func (s *Session) result() Result {
	r := s.r
	r.Hits = slices.Clone(r.Hits)
	r.Scans = slices.Clone(r.Scans)
	return r
}

// start reads the keyspace, plans the reads and checks the derived keys.
func (s *Session) start(ctx context.Context) error {
	r, q, conn := &s.r, s.r.Query, s.conn
	if q.Kind == Empty {
		s.started, s.done = true, true
		return nil
	}
	// A cluster's INFO is one node's: every primary's, summed.
	infos, err := redisview.InfoEach(ctx, conn.Client(), "keyspace")
	r.Commands += max(1, len(infos))
	if err != nil {
		return redisview.ReadError("reading INFO keyspace", err)
	}
	r.Keyspace = map[int]int64{}
	var dbs []int
	for idx, ks := range stats.KeyspaceOf(infos) {
		if ks.Keys > 0 {
			r.Keyspace[idx] = ks.Keys
			dbs = append(dbs, idx)
		}
	}
	slices.Sort(dbs)
	pack := conn.Pack()
	var plan Plan
	switch q.Kind {
	case Family:
		if q.Family.DBs != nil {
			r.FamilyDBs = slices.Clone(q.Family.DBs)
		} else {
			r.FamilyDBs = dbs
		}
		s.started, s.done = true, true
		return nil
	case Glob:
		plan = PlanGlob(q.Raw, dbs)
	case Value:
		plan = PlanValue(pack, q.Name, q.Value, dbs)
	}
	r.Skipped, r.Absent = plan.Skipped, plan.Absent
	r.seen = map[hitKey]bool{}
	if s.cursors == nil {
		if err := r.probe(ctx, conn, plan.Probes); err != nil {
			r.Hits, r.seen = nil, nil
			return err
		}
	}
	if pack != nil {
		s.cls = pack.Classifier()
	}
	r.Scans = nil
	for _, sc := range plan.Scans {
		st := ScanState{Scan: sc, DBKeys: r.Keyspace[sc.DB]}
		if s.cursors != nil {
			c, ok := s.cursors[sc.ID]
			if !ok {
				st.Done, st.Earlier = true, true
			}
			st.Cursor = c
		}
		r.Scans = append(r.Scans, st)
	}
	s.plan, s.started = plan, true
	return nil
}

func famID(f *schema.Family) string {
	if f == nil {
		return "\xff" // keys of no family last
	}
	return f.ID
}

// probe checks the derived keys: TYPE and PTTL of each, one pipeline per
// database.
func (r *Result) probe(ctx context.Context, conn *redisview.Conn, probes []Probe) error {
	r.Checked = len(probes)
	byDB := map[int][]Probe{}
	var dbs []int
	for _, p := range probes {
		if byDB[p.DB] == nil {
			dbs = append(dbs, p.DB)
		}
		byDB[p.DB] = append(byDB[p.DB], p)
	}
	for _, db := range dbs {
		ps := byDB[db]
		pipe := conn.DB(db).Pipeline()
		types := make([]*redis.StatusCmd, len(ps))
		ttls := make([]*redis.DurationCmd, len(ps))
		for i, p := range ps {
			types[i] = pipe.Type(ctx, p.Key)
			ttls[i] = pipe.PTTL(ctx, p.Key)
		}
		cmds, err := pipe.Exec(ctx)
		r.Commands += len(cmds)
		if err := redisview.PipelineErr(cmds, err); err != nil {
			return redisview.ReadError(fmt.Sprintf("checking %d derived keys in db%d", len(ps), db), err)
		}
		for i, p := range ps {
			t, err := types[i].Result()
			if err != nil {
				return redisview.ReadError(fmt.Sprintf("reading TYPE in db%d", db), err)
			}
			if t == "none" {
				continue
			}
			if r.seen[hitKey{db, p.Key}] {
				continue
			}
			r.seen[hitKey{db, p.Key}] = true
			r.Hits = append(r.Hits, Hit{DB: db, Key: p.Key, Family: p.Family, Type: t, TTL: ttlOf(ttls[i])})
		}
	}
	return nil
}

func ttlOf(c *redis.DurationCmd) time.Duration {
	d, err := c.Result()
	if err != nil || d < 0 {
		return -1
	}
	return d
}

// scan runs one slice of a scan within the limits (lim.Calls SCAN calls,
// the deadline, the cap and the total budget), adding what it finds.
func (r *Result) scan(ctx context.Context, conn *redisview.Conn, cls *schema.Classifier, st *ScanState, lim Limits, deadline time.Time) error {
	st.Started = true
	cl := conn.DB(st.DB)
	for calls := 0; calls < lim.Calls; calls++ {
		if time.Now().After(deadline) {
			r.TimedOut = true
			break
		}
		if lim.Total > 0 && r.Scanned >= lim.Total {
			r.Budget = true
			break
		}
		keys, sent, waiting, err := st.scanStep(ctx, cl, lim.Count, lim.Budget, deadline)
		if sent {
			r.Commands++
		}
		if err != nil {
			return err
		}
		if waiting {
			r.Waiting = true
			break
		}
		for _, k := range keys {
			h, ok := st.accept(cls, k)
			if !ok || r.seen[hitKey{st.DB, k}] {
				continue
			}
			if lim.Cap > 0 && len(r.Hits) >= lim.Cap {
				r.Dropped++
				continue
			}
			r.seen[hitKey{st.DB, k}] = true
			r.Hits = append(r.Hits, h)
			st.Found++
		}
		st.Returned += int64(len(keys))
		was := st.Examined
		st.Examined = min(max(int64(st.Calls)*lim.Count, st.Returned), max(st.DBKeys, 0))
		if st.Done {
			// A SCAN may return more than COUNT (the demo's returns the
			// whole database at once).
			st.Examined = max(st.DBKeys, st.Returned)
		}
		r.Scanned += st.Examined - was
		if lim.Cap > 0 && len(r.Hits) >= lim.Cap {
			r.Capped = true
		}
		if st.Done || r.Capped {
			break
		}
	}
	return nil
}

// describe reads TYPE and PTTL of the keys scans found (r.Hits[from:]),
// one pipeline per database; a key gone since is dropped.
func (r *Result) describe(ctx context.Context, conn *redisview.Conn, from int) error {
	var idx []int
	for i, h := range r.Hits {
		if h.Scan && i >= from {
			idx = append(idx, i)
		}
	}
	byDB := map[int][]int{}
	var dbs []int
	for _, i := range idx {
		db := r.Hits[i].DB
		if byDB[db] == nil {
			dbs = append(dbs, db)
		}
		byDB[db] = append(byDB[db], i)
	}
	gone := map[int]bool{}
	for _, db := range dbs {
		pipe := conn.DB(db).Pipeline()
		is := byDB[db]
		types := make([]*redis.StatusCmd, len(is))
		ttls := make([]*redis.DurationCmd, len(is))
		for j, i := range is {
			types[j] = pipe.Type(ctx, r.Hits[i].Key)
			ttls[j] = pipe.PTTL(ctx, r.Hits[i].Key)
		}
		cmds, err := pipe.Exec(ctx)
		r.Commands += len(cmds)
		if err := redisview.PipelineErr(cmds, err); err != nil {
			return redisview.ReadError(fmt.Sprintf("reading the types of %d keys in db%d", len(is), db), err)
		}
		for j, i := range is {
			t, err := types[j].Result()
			if err != nil || t == "none" {
				gone[i] = true
				continue
			}
			r.Hits[i].Type, r.Hits[i].TTL = t, ttlOf(ttls[j])
		}
	}
	if len(gone) > 0 {
		kept := r.Hits[:0]
		for i, h := range r.Hits {
			if !gone[i] {
				kept = append(kept, h)
			}
		}
		r.Hits = kept
	}
	return nil
}
