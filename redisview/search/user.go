package search

import (
	"context"
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

// This file finds everything about one user: every key of the pack's
// families that names the user (by username, account or e-mail address),
// the user's rank on every known leaderboard, and the ban check of the
// name. Keys the placeholders determine are derived and read in one
// pipeline per database; only families where the user fills some
// placeholders and the rest cannot be known are searched by a bounded,
// resumable SCAN.

// Subject is who the user page is about.
type Subject struct {
	Name  string // the username
	Email string // its e-mail address; "" when not known
	// EmailFrom says where Email came from ("given", or the key that
	// holds it); set by RunUser when it found the address itself.
	EmailFrom string
}

// Board is one leaderboard key (found by the leaderboard index).
type Board struct {
	DB     int
	Key    string
	Family *schema.Family
}

// UserLimits bound the scans of one read of a user page.
type UserLimits struct {
	Calls int   // SCAN calls per scan per read
	Count int64 // COUNT of each call
	Cap   int   // keys found by scan kept at most
	// Budget paces the scans (see Limits.Budget); Wait is the longest
	// the scans of one read wait for it altogether (0: 500 ms).
	Budget Budget
	Wait   time.Duration
}

// DefaultUserLimits: 25 SCAN calls × COUNT 100 per scan per read (about
// 2,500 keys of each database with a scan), at most 200 keys by scan.
// COUNT 100, not search's 200: on a loaded 1M-key server bench-user saw
// COUNT 200 with MATCH take up to 3.5 ms. A scan of a big database rarely
// finishes in one read: the live page continues it on later reads.
var DefaultUserLimits = UserLimits{Calls: 25, Count: 100, Cap: 200}

// userNames are placeholders that hold a username only; accountNames
// hold what a person signs in with: the username or the e-mail address.
var (
	userNames    = []string{"username", "ownerusername", "userid", "user", "member"}
	accountNames = []string{"account", "principal", "key"}
)

func phIs(ph schema.Placeholder, names []string) bool {
	return slices.Contains(names, strings.ToLower(ph.Name))
}

// UserProbe is an exact key derived for the user.
type UserProbe struct {
	Probe
	Via string // how: "username", "e-mail", "username as base64", "game 2048", …
}

// UserScan is a scan of the families the user fills only partly.
type UserScan struct {
	Scan
	Pins []map[string]string // per family: the placeholders the user fills
	Vias []string
	Free []bool // per family: an open placeholder takes free text
}

// UserPlan is the reads a user page needs.
type UserPlan struct {
	Probes []UserProbe
	Scans  []UserScan
	Boards []Board // leaderboards whose member is a username
	// NeedEmail: families keyed by e-mail alone while the e-mail is not
	// known; Absent: families naming a user in no database with keys.
	NeedEmail, Absent []*schema.Family
	Games             map[string][]string // placeholder → values known from the boards (gameId → 2048, …)
}

// KnownValues are the values of the boards' other placeholders (gameId),
// which let families keyed by game and user be derived exactly.
func KnownValues(pack *schema.Pack, boards []Board) map[string][]string {
	out := map[string][]string{}
	if pack == nil {
		return out
	}
	cls := pack.Classifier()
	for _, b := range boards {
		m, ok := cls.Match(b.DB, b.Key)
		if !ok {
			continue
		}
		member := ""
		if p, ok := m.Family.Params.(*schema.LeaderboardParams); ok {
			member = p.Member
		}
		for _, v := range m.Vars {
			if v.Name == member {
				continue
			}
			if !slices.Contains(out[v.Name], v.Value) {
				out[v.Name] = append(out[v.Name], v.Value)
			}
		}
	}
	for _, vs := range out {
		slices.Sort(vs)
	}
	return out
}

// maxCombos bounds the exact keys one family may derive from known values.
const maxCombos = 64

// PlanUser plans the reads of a user page over the databases with keys
// (dbs, ascending).
func PlanUser(pack *schema.Pack, subj Subject, dbs []int, boards []Board) UserPlan {
	var p UserPlan
	if pack == nil || subj.Name == "" {
		return p
	}
	p.Games = KnownValues(pack, boards)
	for _, b := range boards {
		if lp, ok := b.Family.Params.(*schema.LeaderboardParams); ok && slices.Contains(userNames, strings.ToLower(lp.Member)) && slices.Contains(dbs, b.DB) {
			p.Boards = append(p.Boards, b)
		}
	}
	type scanFam struct {
		f    *schema.Family
		glob string
		enc  string
		pins map[string]string
		via  string
		free bool
	}
	byDB := map[int][]scanFam{}
	for _, f := range pack.Families {
		if f.Role == schema.RoleLeaderboard {
			continue // asked by member (Boards), never keyed by a user
		}
		phs := f.Pattern.Placeholders()
		var hasUser, hasAccount, hasEmail bool
		for _, ph := range phs {
			hasUser = hasUser || phIs(ph, userNames)
			hasAccount = hasAccount || phIs(ph, accountNames)
			hasEmail = hasEmail || KindOf(ph.Name) == "email"
		}
		if !hasUser && !hasAccount && !hasEmail {
			continue
		}
		var in []int
		for _, db := range dbs {
			if f.InDB(db) {
				in = append(in, db)
			}
		}
		if len(in) == 0 {
			p.Absent = append(p.Absent, f)
			continue
		}
		if hasEmail && !hasUser && !hasAccount && subj.Email == "" {
			p.NeedEmail = append(p.NeedEmail, f)
			continue
		}
		// The pinnings: the username in every user and account
		// placeholder; then, when the e-mail is known, the e-mail in the
		// account placeholders of a family that has no username one.
		type pin struct {
			vals map[string]string
			via  string
		}
		var pins []pin
		vals := map[string]string{}
		for _, ph := range phs {
			switch {
			case phIs(ph, userNames), phIs(ph, accountNames):
				vals[ph.Name] = subj.Name
			case KindOf(ph.Name) == "email" && subj.Email != "":
				vals[ph.Name] = subj.Email
			}
		}
		if len(vals) > 0 {
			pins = append(pins, pin{vals, viaOf(f, vals, subj)})
		}
		if subj.Email != "" && hasAccount && !hasUser {
			ev := map[string]string{}
			for _, ph := range phs {
				if phIs(ph, accountNames) || KindOf(ph.Name) == "email" {
					ev[ph.Name] = subj.Email
				}
			}
			pins = append(pins, pin{ev, viaOf(f, ev, subj)})
		}
		for _, pn := range pins {
			if !acceptsAll(f, pn.vals) {
				continue
			}
			var open []schema.Placeholder
			for _, ph := range phs {
				if _, ok := pn.vals[ph.Name]; !ok {
					open = append(open, ph)
				}
			}
			if keys, how, ok := derive(f, pn.vals, open, p.Games); ok {
				for i, k := range keys {
					for _, db := range in {
						p.Probes = append(p.Probes, UserProbe{Probe: Probe{Family: f, DB: db, Key: k}, Via: join(pn.via, how[i])})
					}
				}
				continue
			}
			globs, enc, ok := globsWith(f, pn.vals)
			if !ok {
				continue
			}
			free := slices.ContainsFunc(open, func(ph schema.Placeholder) bool { return ph.Class == schema.ClassAny })
			for _, db := range in {
				for _, glob := range globs {
					byDB[db] = append(byDB[db], scanFam{f: f, glob: glob, enc: enc, pins: pn.vals, via: pn.via, free: free})
				}
			}
		}
	}
	// One cursor per database: its families' globs merged (with one
	// value, their common start, then the value — a glob every base64
	// encoding of it matches; with the name and the e-mail, their common
	// literal start alone). SCAN's cost is the keys it walks, not the
	// MATCH, so a broader MATCH walks no more.
	for _, db := range dbs {
		g := byDB[db]
		if len(g) == 0 {
			continue
		}
		s := UserScan{Scan: Scan{ID: strconv.Itoa(db) + ".0", DB: db}}
		var encs []string
		for _, sf := range g {
			s.Families = append(s.Families, sf.f)
			s.Globs = append(s.Globs, sf.glob)
			s.Pins = append(s.Pins, sf.pins)
			s.Vias = append(s.Vias, sf.via)
			s.Free = append(s.Free, sf.free)
			if !slices.Contains(encs, sf.enc) {
				encs = append(encs, sf.enc)
			}
		}
		if len(encs) == 1 {
			s.Match = mergeGlobs(s.Families, s.Globs, encs[0])
		} else {
			prefix := literalPrefix(s.Globs[0])
			for _, gl := range s.Globs[1:] {
				lp := literalPrefix(gl)
				n := 0
				for n < len(prefix) && n < len(lp) && prefix[n] == lp[n] {
					n++
				}
				prefix = prefix[:n]
			}
			s.Match = schema.EscapeGlob(prefix) + "*"
		}
		p.Scans = append(p.Scans, s)
	}
	return p
}

func join(a, b string) string {
	if b == "" {
		return a
	}
	return a + ", " + b
}

// viaOf says which of the user's values a key holds, and how encoded.
func viaOf(f *schema.Family, vals map[string]string, subj Subject) string {
	var parts []string
	for _, ph := range f.Pattern.Placeholders() {
		v, ok := vals[ph.Name]
		if !ok {
			continue
		}
		what := "username"
		if v == subj.Email && subj.Email != "" {
			what = "e-mail"
		}
		if ph.Class.Decodes() {
			what += " as " + ph.Class.String()
		}
		if !slices.Contains(parts, what) {
			parts = append(parts, what)
		}
	}
	return strings.Join(parts, " + ")
}

// acceptsAll reports whether f's placeholders can hold vals, each in
// some encoding its class and length accept.
func acceptsAll(f *schema.Family, vals map[string]string) bool {
	for _, ph := range f.Pattern.Placeholders() {
		if v, ok := vals[ph.Name]; ok && len(ph.Encodings(v)) == 0 {
			return false
		}
	}
	return true
}

// derive builds f's exact keys when every open placeholder has known
// values (the games of the boards): per combination, at most maxCombos,
// its key in every encoding (a base64 account: standard or URL-safe,
// padded or not); ok is false when some placeholder has none.
func derive(f *schema.Family, vals map[string]string, open []schema.Placeholder, known map[string][]string) (keys, how []string, ok bool) {
	combos := []map[string]string{{}}
	for _, ph := range open {
		vs := known[ph.Name]
		if len(vs) == 0 {
			return nil, nil, false
		}
		var next []map[string]string
		for _, c := range combos {
			for _, v := range vs {
				m := map[string]string{ph.Name: v}
				for k, x := range c {
					m[k] = x
				}
				next = append(next, m)
			}
		}
		if len(next) > maxCombos {
			return nil, nil, false
		}
		combos = next
	}
	for _, c := range combos {
		all := map[string]string{}
		var hs []string
		for k, v := range vals {
			all[k] = v
		}
		for _, ph := range open {
			all[ph.Name] = c[ph.Name]
			hs = append(hs, ph.Name+" "+c[ph.Name])
		}
		ks, err := f.Keys(all)
		if err != nil {
			continue // a known value this placeholder cannot hold
		}
		for _, k := range ks {
			keys = append(keys, k)
			how = append(how, strings.Join(hs, ", "))
		}
	}
	return keys, how, true
}

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

// shown reports a family whose values the page shows raw: strings no role
// decoder reads, never sensitive.
func shown(f *schema.Family) bool {
	if f == nil || f.Sensitive || f.Type != "string" {
		return false
	}
	switch f.Role {
	case schema.RoleCache, schema.RoleRecord, schema.RoleIndex, schema.RoleSession, schema.RoleChallenge, schema.RoleTicket:
		return true
	}
	return false
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
}

// UserQuery is one read of a user page.
type UserQuery struct {
	Subject Subject
	Boards  []Board
	// Scan runs the scans (resuming Cursors; nil starts them); false
	// re-reads Known (keys earlier scans found) instead.
	Scan    bool
	Cursors map[string]uint64
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
func (r UserResult) Cursors() map[string]uint64 {
	var out map[string]uint64
	for _, s := range r.Scans {
		if !s.Done {
			if out == nil {
				out = map[string]uint64{}
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
// e-mail address): GETRANGE 0 maxLinkValue-1.
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
	plan := PlanUser(pack, q.Subject, dbs, q.Boards)
	plan.Probes = q.known(plan.Probes)
	links, err := r.round(ctx, conn, pack, plan.Probes, plan.Boards, dbs, true)
	if err != nil {
		return r, err
	}
	// Follow the links: an index's value fills its target's placeholders.
	var linked []UserProbe
	for _, l := range links {
		linked = append(linked, l.probes(pack, dbs)...)
	}
	linked = q.known(linked)
	if len(linked) > 0 {
		more, err := r.round(ctx, conn, pack, linked, nil, dbs, false)
		if err != nil {
			return r, err
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
		if r.Subject.Email != "" && q.Subject.Email == "" {
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
				return r, err
			}
			plan.Probes = append(plan.Probes, extra...)
			plan.Scans = ep.Scans // the name's and the e-mail's, one cursor per database
			plan.NeedEmail = nil
		}
	}
	r.Checked = len(plan.Probes)
	r.Plan = plan
	var cls *schema.Classifier
	if pack != nil {
		cls = pack.Classifier()
	}
	if q.Scan {
		wait := lim.Wait
		if wait <= 0 {
			wait = 500 * time.Millisecond
		}
		deadline := time.Now().Add(wait)
		for _, s := range plan.Scans {
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
				return r, err
			}
			r.Scans = append(r.Scans, st)
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

// round reads probes (TYPE, PTTL; GETRANGE of string indexes and, when
// follow is false, of string records), boards (rank, score) and, when
// bans, the ban checks, one pipeline per database. It returns the values
// read to follow.
func (r *UserResult) round(ctx context.Context, conn *redisview.Conn, pack *schema.Pack, probes []UserProbe, boards []Board, dbs []int, bans bool) ([]link, error) {
	type dbReads struct {
		probes []UserProbe
		boards []Board
		ban    []*schema.Family
	}
	byDB := map[int]*dbReads{}
	get := func(db int) *dbReads {
		if byDB[db] == nil {
			byDB[db] = &dbReads{}
		}
		return byDB[db]
	}
	for _, p := range probes {
		get(p.DB).probes = append(get(p.DB).probes, p)
	}
	for _, b := range boards {
		get(b.DB).boards = append(get(b.DB).boards, b)
	}
	if bans && pack != nil {
		// In the bloom's own database even when it has no keys: an
		// absent bloom is a verdict too (nobody is banned).
		for _, f := range BanBlooms(pack) {
			in := f.DBs
			if in == nil {
				in = dbs
			}
			for _, db := range in {
				get(db).ban = append(get(db).ban, f)
			}
		}
	}
	order := make([]int, 0, len(byDB))
	for db := range byDB {
		order = append(order, db)
	}
	slices.Sort(order)
	var links []link
	for _, db := range order {
		rd := byDB[db]
		pipe := conn.DB(db).Pipeline()
		types := make([]*redis.StatusCmd, len(rd.probes))
		ttls := make([]*redis.DurationCmd, len(rd.probes))
		vals := make([]*redis.StringCmd, len(rd.probes))
		lens := make([]*redis.IntCmd, len(rd.probes))
		metas := make([]*redis.SliceCmd, len(rd.probes))
		for i, p := range rd.probes {
			types[i] = pipe.Type(ctx, p.Key)
			ttls[i] = pipe.PTTL(ctx, p.Key)
			if conn.Sensitive(db, p.Key) {
				continue // its name, type and TTL only
			}
			if shown(p.Family) {
				vals[i] = pipe.GetRange(ctx, p.Key, 0, maxLinkValue-1)
				lens[i] = pipe.StrLen(ctx, p.Key)
			}
			if mp, ok := p.Family.Params.(*schema.LeaderboardMetaParams); ok && p.Family.Type == "hash" && !p.Family.Sensitive && len(mp.Fields) > 0 {
				metas[i] = pipe.HMGet(ctx, p.Key, mp.Fields...)
			}
		}
		ranks := make([]*redis.IntCmd, len(rd.boards))
		scores := make([]*redis.FloatCmd, len(rd.boards))
		for i, b := range rd.boards {
			if sensitiveBoard(conn, b) {
				continue // neither rank nor score
			}
			if familyDesc(b.Family) {
				ranks[i] = pipe.ZRevRank(ctx, b.Key, r.Subject.Name)
			} else {
				ranks[i] = pipe.ZRank(ctx, b.Key, r.Subject.Name)
			}
			scores[i] = pipe.ZScore(ctx, b.Key, r.Subject.Name)
		}
		type banCmds struct {
			bits  []*redis.IntCmd
			exist *redis.IntCmd
			in    *redis.BoolCmd
			check BanCheck
		}
		var bcs []banCmds
		for _, f := range rd.ban {
			bp := f.Params.(*schema.BloomParams)
			bc := banCmds{check: BanCheck{DB: db, Bloom: f, BloomKey: f.Pattern.String()}}
			bc.check.BloomKey, _ = f.Key(nil)
			if bp.Members != nil && bp.Members.Family != nil && len(bp.Members.Pattern.Placeholders()) == 0 {
				bc.check.Set, bc.check.HasSet = bp.Members.Family, true
				bc.check.SetKey, _ = bp.Members.Pattern.Key(nil)
			}
			if f.Sensitive || conn.Sensitive(db, bc.check.BloomKey) || bc.check.HasSet && (bc.check.Set.Sensitive || conn.Sensitive(db, bc.check.SetKey)) {
				// Neither bits nor membership: a verdict would tell what
				// the sensitive list holds.
				bc.check.Sensitive = true
				bcs = append(bcs, bc)
				continue
			}
			bc.check.Positions = redisview.BloomPositions(r.Subject.Name, bp.Bits, bp.Hashes)
			for _, pos := range bc.check.Positions {
				bc.bits = append(bc.bits, pipe.GetBit(ctx, bc.check.BloomKey, pos))
			}
			bc.exist = pipe.Exists(ctx, bc.check.BloomKey)
			if bc.check.HasSet {
				bc.in = pipe.SIsMember(ctx, bc.check.SetKey, r.Subject.Name)
			}
			bcs = append(bcs, bc)
		}
		cmds, err := pipe.Exec(ctx)
		r.Commands += len(cmds)
		if err := redisview.PipelineErr(cmds, err); err != nil {
			return nil, redisview.ReadError(fmt.Sprintf("reading the user's keys in db%d", db), err)
		}
		for i, p := range rd.probes {
			t, err := types[i].Result()
			if err != nil {
				return nil, redisview.ReadError(fmt.Sprintf("reading TYPE in db%d", db), err)
			}
			if t == "none" {
				continue
			}
			h := UserHit{Hit: Hit{DB: db, Key: p.Key, Family: p.Family, Type: t, TTL: ttlOf(ttls[i])}, Via: p.Via}
			if vals[i] != nil && t == "string" {
				v, err := vals[i].Result()
				n, _ := lens[i].Result()
				if err == nil && v != "" && n < maxLinkValue && (p.Family.Role == schema.RoleIndex || !bans && p.Family.Role == schema.RoleRecord) {
					links = append(links, link{db: db, key: p.Key, fam: p.Family, value: v})
				}
				if err == nil {
					h.Value, h.Cut = v, n > maxShown
					if len(h.Value) > maxShown {
						h.Value = h.Value[:maxShown]
					}
				}
			}
			if metas[i] != nil && t == "hash" {
				if vs, err := metas[i].Result(); err == nil {
					for j, name := range p.Family.Params.(*schema.LeaderboardMetaParams).Fields {
						if sv, ok := vs[j].(string); ok {
							if len(sv) > maxShown {
								sv = sv[:maxShown]
							}
							h.Fields = append(h.Fields, Field{Name: name, Value: sv})
						}
					}
				}
			}
			r.Hits = append(r.Hits, h)
		}
		for i, b := range rd.boards {
			rk := Rank{Board: b, Desc: familyDesc(b.Family)}
			if ranks[i] == nil {
				rk.Sensitive = true
			} else if n, err := ranks[i].Result(); err == nil {
				rk.Found, rk.Rank = true, n
				rk.Score, _ = scores[i].Result()
			}
			r.Ranks = append(r.Ranks, rk)
		}
		for _, bc := range bcs {
			c := bc.check
			if c.Sensitive {
				r.Bans = append(r.Bans, c)
				continue
			}
			c.AllSet = true
			for _, b := range bc.bits {
				set := b.Val() == 1
				c.Bits = append(c.Bits, set)
				c.AllSet = c.AllSet && set
			}
			c.BloomMissing = bc.exist.Val() == 0
			if bc.in != nil {
				c.InSet = bc.in.Val()
			}
			c.Verdict = verdict(c)
			r.Bans = append(r.Bans, c)
		}
	}
	return links, nil
}

func verdict(c BanCheck) string {
	switch {
	case c.BloomMissing && c.InSet:
		return "not banned: the bloom key does not exist, so the application lets every name through — though the name is in the ban set"
	case c.BloomMissing:
		return "not banned (the bloom key does not exist: nobody is banned)"
	case !c.AllSet && c.InSet:
		return "not banned: a bloom bit is not set, so the application lets the name through — though the name is in the ban set (the filter misses it)"
	case !c.AllSet:
		return "not banned"
	case !c.HasSet:
		return "banned (the bloom says so; no exact set to confirm)"
	case c.InSet:
		return "banned"
	}
	return "not banned: the bloom says maybe, the set says no (a false positive)"
}

// BanBlooms are the pack's bloom filters of banned names: role bloom,
// in a domain or family whose name says ban.
func BanBlooms(pack *schema.Pack) []*schema.Family {
	var out []*schema.Family
	for _, f := range pack.Families {
		if _, ok := f.Params.(*schema.BloomParams); !ok || f.Role != schema.RoleBloom || len(f.Pattern.Placeholders()) > 0 {
			continue
		}
		if strings.Contains(strings.ToLower(f.ID+" "+f.Domain), "ban") {
			out = append(out, f)
		}
	}
	return out
}

// sensitiveBoard reports a board whose members and scores are never
// read: its family, or the family its key classifies as, is sensitive.
func sensitiveBoard(conn *redisview.Conn, b Board) bool {
	return b.Family != nil && b.Family.Sensitive || conn.Sensitive(b.DB, b.Key)
}

// familyDesc: a leaderboard shows the highest score first unless its
// pack says order asc.
func familyDesc(f *schema.Family) bool {
	if p, ok := f.Params.(*schema.LeaderboardParams); ok {
		return p.Order != "asc"
	}
	return true
}

// scanUser runs one scan within the limits: a key counts when the
// classifier puts it in one of the scan's families and that family's
// pattern holds the user's values exactly there (Pinned), so
// "ops:admin2" is never taken for "ops:admin".
func (r *UserResult) scanUser(ctx context.Context, conn *redisview.Conn, cls *schema.Classifier, s UserScan, st *ScanState, lim UserLimits, deadline time.Time) error {
	st.Started = true
	cl := conn.DB(st.DB)
	for st.Calls < lim.Calls {
		if lim.Budget != nil {
			if err := take(ctx, lim.Budget, lim.Count, deadline); err != nil {
				if ctx.Err() != nil {
					return redisview.ReadError(fmt.Sprintf("waiting for scan budget in db%d", st.DB), ctx.Err())
				}
				r.Waiting = true
				break
			}
		}
		keys, next, err := cl.Scan(ctx, st.Cursor, st.Match, lim.Count).Result()
		r.Commands++
		st.Calls++
		if err != nil {
			return redisview.ReadError(fmt.Sprintf("scanning db%d", st.DB), err)
		}
		for _, k := range keys {
			if cls == nil {
				break
			}
			fam, _ := cls.Classify(st.DB, k)
			for i, f := range s.Families {
				if f != fam || !GlobMatch(s.Globs[i], k) || !f.Pattern.Pinned(k, s.Pins[i]) {
					continue
				}
				if slices.ContainsFunc(r.Hits, func(o UserHit) bool { return o.DB == st.DB && o.Key == k }) {
					break
				}
				if lim.Cap > 0 && len(r.Hits) >= lim.Cap {
					r.Capped = true
					break
				}
				r.Hits = append(r.Hits, UserHit{Hit: Hit{DB: st.DB, Key: k, Family: f, Scan: true}, Via: join(s.Vias[i], "found by scan"), Ambiguous: s.Free[i]})
				st.Found++
				break
			}
		}
		st.Cursor = next
		if next == 0 {
			st.Done = true
			break
		}
	}
	st.Examined = min(int64(st.Calls)*lim.Count, max(st.DBKeys, 0))
	return nil
}

// describeScanned reads TYPE and PTTL of the hits found by scan (this
// read's and earlier ones'), one pipeline per database; a key gone since
// is dropped.
func (r *UserResult) describeScanned(ctx context.Context, conn *redisview.Conn) error {
	res := Result{}
	var idx []int
	for i, h := range r.Hits {
		if h.Scan {
			idx = append(idx, i)
			res.Hits = append(res.Hits, h.Hit)
		}
	}
	if len(idx) == 0 {
		return nil
	}
	if err := res.describe(ctx, conn, 0); err != nil {
		return err
	}
	r.Commands += res.Commands
	kept := map[string]Hit{}
	for _, h := range res.Hits {
		kept[strconv.Itoa(h.DB)+":"+h.Key] = h
	}
	out := r.Hits[:0]
	for _, h := range r.Hits {
		if h.Scan {
			d, ok := kept[strconv.Itoa(h.DB)+":"+h.Key]
			if !ok {
				continue
			}
			h.Hit = d
		}
		out = append(out, h)
	}
	r.Hits = out
	return nil
}
