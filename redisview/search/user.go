package search

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/redisview/stats"
)

// UserHit is one key of the user's.
type UserHit struct {
	Hit
	Via string
	// Value: the start of a small string of a family no role decoder reads
	// (a cache, a record, a session), never of a sensitive family; Cut
	// when it is longer than maxShown. Fields: a leaderboard row's details.
	Value  string
	Cut    bool
	Fields []Field
	// Ambiguous: the name is followed in the key by free text (an IP, a
	// keyword), so the key may also be read as a longer name's that
	// starts with this one and a separator.
	Ambiguous bool
}

// Field is one hash field read.
type Field struct{ Name, Value string }

// maxShown is the most of an undecoded string value read (GETRANGE).
const maxShown = 128

// shown reports a family whose values the page shows raw: strings of a
// plain role (schema.Plain: no decoder reads them), never sensitive.
func shown(f *schema.Family) bool {
	return f != nil && !f.Sensitive && f.Type == "string" && schema.Plain(f.Role)
}

// Rank is the user's place on one leaderboard.
type Rank struct {
	Board Board
	Found bool
	Rank  int64 // 0-based, in the board's display order
	Score float64
	Desc  bool
	// Sensitive: the board's family is sensitive, so it was not read (no
	// rank, no score: Found says nothing).
	Sensitive bool
	// Err: the server refused the read (Found says nothing).
	Err string
}

// BanCheck is the name against one bloom filter and its exact set, as
// the application decides: a bit not set means not banned; all bits set
// and the name in the set means banned; all set and not in the set is a
// false positive.
type BanCheck struct {
	DB               int
	Bloom, Set       *schema.Family
	BloomKey, SetKey string
	Positions        []int64
	Bits             []bool
	AllSet, InSet    bool
	HasSet           bool
	BloomMissing     bool // the bloom key does not exist: the filter lets everyone through
	Verdict          string
	// Sensitive: the bloom's or the set's family is sensitive, so neither
	// was read: no bits, no membership, no verdict.
	Sensitive bool
	// Err: the server refused a read of the check (the verdict says "not
	// read": a refusal is not an absence).
	Err string
}

// UserQuery is one read of a user page.
type UserQuery struct {
	Subject Subject
	Boards  []Board
	// Scan runs the scans (resuming Cursors; nil starts them); false
	// re-reads Known (keys earlier scans found) instead.
	Scan    bool
	Cursors map[string]redisview.Cursor
	Known   []UserHit
	// Reprobe checks every derived key; false re-reads only the derived
	// keys in Known (a live tick: the keys found, not the ones that were
	// not there — a later Reprobe finds those).
	Reprobe bool
}

// known filters probes to the keys in q.Known unless q.Reprobe.
func (q UserQuery) known(ps []UserProbe) []UserProbe {
	if q.Reprobe {
		return ps
	}
	var out []UserProbe
	for _, p := range ps {
		if slices.ContainsFunc(q.Known, func(h UserHit) bool { return !h.Scan && h.DB == p.DB && h.Key == p.Key }) {
			out = append(out, p)
		}
	}
	return out
}

// UserResult is what one read found.
type UserResult struct {
	Subject  Subject
	Keyspace map[int]int64
	Plan     UserPlan
	Hits     []UserHit
	Ranks    []Rank
	Bans     []BanCheck
	Scans    []ScanState
	Capped   bool
	// Waiting: the scans stopped waiting for the scan budget; the next
	// read continues them (Cursors).
	Waiting  bool
	Checked  int // exact keys derived and checked
	Commands int
	Took     time.Duration
}

// Cursors are the unfinished scans' cursors (nil when all are done).
func (r UserResult) Cursors() map[string]redisview.Cursor {
	var out map[string]redisview.Cursor
	for _, s := range r.Scans {
		if !s.Done {
			if out == nil {
				out = map[string]redisview.Cursor{}
			}
			out[s.ID] = s.Cursor
		}
	}
	return out
}

// ScanHits are the hits found by scan (to carry to the next read).
func (r UserResult) ScanHits() []UserHit {
	var out []UserHit
	for _, h := range r.Hits {
		if h.Scan {
			out = append(out, h)
		}
	}
	return out
}

// maxLinkValue bounds a value read to follow a link (an order number, an
// e-mail address): a value of maxLinkValue bytes or more is not followed.
const maxLinkValue = 320

// RunUser reads a user page: INFO keyspace; per database one pipeline
// of TYPE and PTTL of every derived key, the user's rank and score on each
// board, the ban check, and the value of each string index (the active
// order: its order number derives the order's keys, and a record of the
// order holding an e-mail address gives the user's e-mail, whose keys are
// then derived too); then the bounded scans.
func RunUser(ctx context.Context, conn *redisview.Conn, q UserQuery, lim UserLimits) (UserResult, error) {
	start := time.Now()
	r := UserResult{Subject: q.Subject}
	dbs, err := r.readKeyspace(ctx, conn)
	if err != nil {
		return r, err
	}
	pack := conn.Pack()
	plan := PlanUser(pack, q.Subject, dbs, q.Boards)
	plan.Probes = q.known(plan.Probes)
	links, err := r.round(ctx, conn, pack, plan.Probes, plan.Boards, dbs, true)
	if err != nil {
		return r, err
	}
	if err := r.follow(ctx, conn, pack, q, &plan, links, dbs); err != nil {
		return r, err
	}
	r.Checked = len(plan.Probes)
	r.Plan = plan
	if q.Scan {
		var cls *schema.Classifier
		if pack != nil {
			cls = pack.Classifier()
		}
		if err := r.runScans(ctx, conn, cls, q, plan.Scans, lim); err != nil {
			return r, err
		}
	}
	// Keys found by earlier scans, still the user's: re-read.
	for _, h := range q.Known {
		if h.Scan && !slices.ContainsFunc(r.Hits, func(o UserHit) bool { return o.DB == h.DB && o.Key == h.Key }) {
			h.Type = ""
			r.Hits = append(r.Hits, h)
		}
	}
	if err := r.describeScanned(ctx, conn); err != nil {
		return r, err
	}
	slices.SortStableFunc(r.Hits, func(a, b UserHit) int {
		if a.DB != b.DB {
			return a.DB - b.DB
		}
		if c := strings.Compare(famID(a.Family), famID(b.Family)); c != 0 {
			return c
		}
		return strings.Compare(a.Key, b.Key)
	})
	r.Took = time.Since(start)
	return r, nil
}

// readKeyspace reads INFO keyspace (every primary's on a cluster): the
// databases with keys, ascending.
func (r *UserResult) readKeyspace(ctx context.Context, conn *redisview.Conn) ([]int, error) {
	// A cluster's INFO is one node's: every primary's, summed.
	infos, err := redisview.InfoEach(ctx, conn.Client(), "keyspace")
	r.Commands += max(1, len(infos))
	if err != nil {
		return nil, redisview.ReadError("reading INFO keyspace", err)
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
	return dbs, nil
}

// follow follows the links: an index's value fills its target's
// placeholders; a record holding an e-mail address gives the user's
// e-mail, whose own keys are then read too. plan grows by the keys read.
func (r *UserResult) follow(ctx context.Context, conn *redisview.Conn, pack *schema.Pack, q UserQuery, plan *UserPlan, links []link, dbs []int) error {
	var linked []UserProbe
	for _, l := range links {
		linked = append(linked, l.probes(pack, dbs)...)
	}
	linked = q.known(linked)
	if len(linked) == 0 {
		return nil
	}
	more, err := r.round(ctx, conn, pack, linked, nil, dbs, false)
	if err != nil {
		return err
	}
	plan.Probes = append(plan.Probes, linked...)
	if r.Subject.Email == "" {
		for _, l := range more {
			if looksLikeEmail(l.value) {
				r.Subject.Email, r.Subject.EmailFrom = l.value, l.key
				break
			}
		}
	}
	if r.Subject.Email == "" || q.Subject.Email != "" {
		return nil
	}
	// The e-mail's own keys.
	ep := PlanUser(pack, Subject{Name: q.Subject.Name, Email: r.Subject.Email}, dbs, q.Boards)
	var extra []UserProbe
	for _, pr := range ep.Probes {
		if !slices.ContainsFunc(plan.Probes, func(o UserProbe) bool { return o.DB == pr.DB && o.Key == pr.Key }) {
			extra = append(extra, pr)
		}
	}
	extra = q.known(extra)
	if _, err := r.round(ctx, conn, pack, extra, nil, dbs, false); err != nil {
		return err
	}
	plan.Probes = append(plan.Probes, extra...)
	plan.Scans = ep.Scans // the name's and the e-mail's, one cursor per database
	plan.NeedEmail = nil
	return nil
}

// runScans runs the plan's scans within the limits, resuming q.Cursors
// (a scan not among them finished on an earlier read of the pass).
func (r *UserResult) runScans(ctx context.Context, conn *redisview.Conn, cls *schema.Classifier, q UserQuery, scans []UserScan, lim UserLimits) error {
	wait := lim.Wait
	if wait <= 0 {
		wait = 500 * time.Millisecond
	}
	deadline := time.Now().Add(wait)
	for _, s := range scans {
		st := ScanState{Scan: s.Scan, DBKeys: r.Keyspace[s.DB]}
		if q.Cursors != nil {
			c, ok := q.Cursors[s.ID]
			if !ok {
				st.Done, st.Earlier = true, true
				r.Scans = append(r.Scans, st)
				continue
			}
			st.Cursor = c
		}
		if r.Waiting { // left to the next read, from where it was
			r.Scans = append(r.Scans, st)
			continue
		}
		if err := r.scanUser(ctx, conn, cls, s, &st, lim, deadline); err != nil {
			return err
		}
		r.Scans = append(r.Scans, st)
	}
	return nil
}

// link is a string index's value, read to follow it.
type link struct {
	db    int
	key   string
	fam   *schema.Family
	value string
}

// probes are the keys an index's value derives: every family whose
// placeholders are exactly those of the index's target.
func (l link) probes(pack *schema.Pack, dbs []int) []UserProbe {
	ip, ok := l.fam.Params.(*schema.IndexParams)
	if !ok || ip.Of == nil || l.value == "" {
		return nil
	}
	names := map[string]bool{}
	for _, ph := range ip.Of.Pattern.Placeholders() {
		names[ph.Name] = true
	}
	if len(names) != 1 {
		return nil
	}
	var out []UserProbe
	for _, f := range pack.Families {
		phs := f.Pattern.Placeholders()
		if len(phs) == 0 || slices.ContainsFunc(phs, func(ph schema.Placeholder) bool { return !names[ph.Name] }) {
			continue
		}
		vals := map[string]string{}
		for _, ph := range phs {
			vals[ph.Name] = l.value
		}
		ks, err := f.Keys(vals)
		if err != nil {
			continue
		}
		for _, db := range dbs {
			if f.InDB(db) {
				for _, k := range ks {
					out = append(out, UserProbe{Probe: Probe{Family: f, DB: db, Key: k}, Via: "linked from " + l.key})
				}
			}
		}
	}
	return out
}
