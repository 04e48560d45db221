package search

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
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
	Time  time.Duration // all the scans of a request
}

// DefaultLimits: 250 SCAN calls × COUNT 200 (about 50,000 keys) per
// database per request, at most 200 keys found, 2 seconds. COUNT stays at
// 200 so that one SCAN with MATCH stays under 2 ms on a big database (at
// COUNT 1000 bench-search saw 4 ms).
var DefaultLimits = Limits{Calls: 250, Count: 200, Cap: 200, Time: 2 * time.Second}

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
	Calls    int   // SCAN calls this request
	Examined int64 // keys looked at this request, about (calls × COUNT, at most DBKeys)
	Found    int
	Cursor   uint64 // where a continue starts; 0 when Done
	Done     bool   // the cursor came back to 0 (on this request or an earlier one)
	Earlier  bool   // finished on an earlier request (a continue does not repeat it)
	Started  bool   // false: the cap or the time budget stopped the search first
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
	// Continued: a continue request; derived keys were checked on the first.
	Continued bool
	// FamilyDBs: for a family id, its databases (those the pack names, or
	// every database with keys for a family of any database).
	FamilyDBs []int
	// Commands issued by this request (INFO, pipelines' commands, SCANs).
	Commands int
}

// Cursors is the continue link's parameter: each unfinished scan's id and
// cursor; "" when every scan is done.
func (r Result) Cursors() string {
	var parts []string
	for _, s := range r.Scans {
		if !s.Done {
			parts = append(parts, s.ID+":"+strconv.FormatUint(s.Cursor, 10))
		}
	}
	return strings.Join(parts, ",")
}

// ErrCursors is a malformed continue parameter.
var ErrCursors = errors.New("malformed continue cursors")

// ParseCursors reads Cursors' form; "" is the first request (nil).
func ParseCursors(s string) (map[string]uint64, error) {
	if s == "" {
		return nil, nil
	}
	out := map[string]uint64{}
	for _, part := range strings.Split(s, ",") {
		id, cur, ok := strings.Cut(part, ":")
		db, n, ok2 := strings.Cut(id, ".")
		if !ok || !ok2 || !digits(db) || !digits(n) || len(out) >= 4096 {
			return nil, fmt.Errorf("%w: %q", ErrCursors, part)
		}
		c, err := strconv.ParseUint(cur, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%w: %q", ErrCursors, part)
		}
		out[id] = c
	}
	return out, nil
}

func digits(s string) bool {
	if s == "" || len(s) > 5 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Run answers q on conn. cursors is nil on a first request, else the
// scans to continue (ParseCursors); scans it does not name are done.
func Run(ctx context.Context, conn *redisview.Conn, q Query, cursors map[string]uint64, lim Limits) (Result, error) {
	r := Result{Query: q, Continued: cursors != nil}
	if q.Kind == Empty {
		return r, nil
	}
	info, err := conn.Client().Info(ctx, "keyspace").Result()
	r.Commands++
	if err != nil {
		return r, redisview.ReadError("reading INFO keyspace", err)
	}
	r.Keyspace = map[int]int64{}
	var dbs []int
	for idx, ks := range stats.ParseInfo(info).Keyspace() {
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
		return r, nil
	case Glob:
		plan = PlanGlob(q.Raw, dbs)
	case Value:
		plan = PlanValue(pack, q.Name, q.Value, dbs)
	}
	r.Skipped, r.Absent = plan.Skipped, plan.Absent
	if cursors == nil {
		if err := r.probe(ctx, conn, plan.Probes); err != nil {
			return r, err
		}
	}
	var cls *schema.Classifier
	if pack != nil {
		cls = pack.Classifier()
	}
	deadline := time.Now().Add(lim.Time)
	for _, s := range plan.Scans {
		st := ScanState{Scan: s, DBKeys: r.Keyspace[s.DB]}
		if cursors != nil {
			c, ok := cursors[s.ID]
			if !ok {
				st.Done, st.Earlier = true, true
				r.Scans = append(r.Scans, st)
				continue
			}
			st.Cursor = c
		}
		if r.Capped || r.TimedOut {
			r.Scans = append(r.Scans, st)
			continue
		}
		if err := r.scan(ctx, conn, cls, &st, lim, deadline); err != nil {
			return r, err
		}
		r.Scans = append(r.Scans, st)
	}
	if err := r.describe(ctx, conn); err != nil {
		return r, err
	}
	slices.SortStableFunc(r.Hits, func(a, b Hit) int {
		if a.DB != b.DB {
			return a.DB - b.DB
		}
		if c := strings.Compare(famID(a.Family), famID(b.Family)); c != 0 {
			return c
		}
		return strings.Compare(a.Key, b.Key)
	})
	return r, nil
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

// scan runs one scan within the limits, adding what it finds.
func (r *Result) scan(ctx context.Context, conn *redisview.Conn, cls *schema.Classifier, st *ScanState, lim Limits, deadline time.Time) error {
	st.Started = true
	cl := conn.DB(st.DB)
	seen := map[string]bool{}
	for st.Calls < lim.Calls {
		if time.Now().After(deadline) {
			r.TimedOut = true
			break
		}
		keys, next, err := cl.Scan(ctx, st.Cursor, st.Match, lim.Count).Result()
		r.Commands++
		st.Calls++
		if err != nil {
			return redisview.ReadError(fmt.Sprintf("scanning db%d", st.DB), err)
		}
		for _, k := range keys {
			if seen[k] {
				continue
			}
			seen[k] = true
			h, ok := st.accept(cls, k)
			if !ok {
				continue
			}
			if lim.Cap > 0 && len(r.Hits) >= lim.Cap {
				r.Dropped++
				continue
			}
			r.Hits = append(r.Hits, h)
			st.Found++
		}
		st.Cursor = next
		if next == 0 {
			st.Done = true
		}
		if lim.Cap > 0 && len(r.Hits) >= lim.Cap {
			r.Capped = true
		}
		if st.Done || r.Capped {
			break
		}
	}
	st.Examined = min(int64(st.Calls)*lim.Count, max(st.DBKeys, 0))
	return nil
}

// accept decides whether a key SCAN returned is a result of this scan.
func (st *ScanState) accept(cls *schema.Classifier, key string) (Hit, bool) {
	h := Hit{DB: st.DB, Key: key, Scan: true}
	var fam *schema.Family
	if cls != nil {
		fam, _ = cls.Classify(st.DB, key)
	}
	if st.Families == nil { // a glob: every key SCAN MATCH returns
		h.Family = fam
		return h, true
	}
	for i, f := range st.Families {
		if f == fam && GlobMatch(st.Globs[i], key) {
			h.Family = f
			return h, true
		}
	}
	return h, false
}

// describe reads TYPE and PTTL of the keys scans found, one pipeline per
// database; a key gone since is dropped.
func (r *Result) describe(ctx context.Context, conn *redisview.Conn) error {
	var idx []int
	for i, h := range r.Hits {
		if h.Scan {
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
