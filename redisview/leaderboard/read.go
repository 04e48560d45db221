package redisview

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview/schema"
)

// Leaderboards are sorted sets whose family has role leaderboard. Reading
// one never loads it whole: windows are ZREVRANGE/ZRANGE start..stop (at
// most MaxWindow entries), members are found with ZREVRANK/ZRANK, and the
// list of leaderboards comes from SCAN MATCH <family prefix>* COUNT 500.

const (
	// MaxWindow caps the entries one read returns.
	MaxWindow = 500
	// DefaultWindow is the window size when a caller asks for count <= 0.
	DefaultWindow = 50
	// MaxLookupAround caps the neighbours LookupMember reads on each side.
	MaxLookupAround = (MaxWindow - 1) / 2
	// MetaFieldCap caps the fields read from one member's metadata hash.
	// The hash is small by schema; a hash that is not is read with one
	// HSCAN step (COUNT MetaFieldCap) and cut at MetaFieldCap fields, so a
	// corrupt or hostile hash costs the server and Keydeck a bounded amount.
	MetaFieldCap = 32
	// DefaultListLimit is the key cap of ListLeaderboards for limit <= 0.
	DefaultListLimit = 1000
	// leaderboardScanCount is the SCAN COUNT of ListLeaderboards.
	leaderboardScanCount = 500
	// lbScriptRetry is how long a connection whose server refused scripts
	// reads with pipelines before the script is tried again (ACLs change).
	lbScriptRetry = 5 * time.Minute
)

// LeaderboardSummary is one leaderboard in the list.
type LeaderboardSummary struct {
	DB        int
	Key       string
	Family    string
	Size      int64 // ZCARD
	TopMember string
	TopScore  float64
	HasTop    bool
	Sensitive bool   // of a sensitive family: no member was read
	Desc      bool   // display order: highest score first
	Err       string // the key could not be read (wrong type); Size is -1
}

// LeaderboardRef names one leaderboard key found by ScanLeaderboards.
type LeaderboardRef struct {
	DB     int
	Key    string
	Family *schema.Family
}

// LeaderboardFamilies returns the families with role leaderboard in the
// connection's pack, or none with the reason why.
func LeaderboardFamilies(c *Conn) ([]*schema.Family, string) {
	p := c.Pack()
	if p == nil {
		why := c.PackChoice().Why
		if why == "" {
			why = "no schema pack has been chosen for this connection yet"
		}
		return nil, "no schema pack explains this connection's keys (" + why + "), so no key is known to be a leaderboard"
	}
	var out []*schema.Family
	for _, f := range p.Families {
		if f.Role == schema.RoleLeaderboard {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		return nil, "schema pack " + p.Name + " has no leaderboard family"
	}
	return out, ""
}

// ListLeaderboards finds every key of every leaderboard family of the
// connection's pack (ScanLeaderboards, at most limit keys; truncated says
// more exist) and reads each one's size and top entry in one pipelined round
// trip (SummarizeLeaderboards). Without a pack or a leaderboard family the
// list is empty; LeaderboardFamilies says why.
func ListLeaderboards(ctx context.Context, c *Conn, limit int) ([]LeaderboardSummary, bool, error) {
	refs, truncated, err := ScanLeaderboards(ctx, c, limit)
	if err != nil {
		return nil, false, err
	}
	sums, err := SummarizeLeaderboards(ctx, c, refs)
	if err != nil {
		return nil, false, err
	}
	return sums, truncated, nil
}

// ScanLeaderboards walks, in each leaderboard family's databases, the keys
// matching the family pattern's literal prefix (SCAN MATCH prefix* COUNT
// 500) and keeps those the classifier puts in a leaderboard family: a longer
// pattern with the same prefix (mg:score:leaderboard:refresh:rate:…) is
// another family. It stops at the first key past limit and reports
// truncated. The result is sorted by database and key. A server with many
// keys under the prefix costs one SCAN round trip per 500 keys visited, so
// callers that refresh the list often should rescan rarely and call
// SummarizeLeaderboards on the keys they have.
func ScanLeaderboards(ctx context.Context, c *Conn, limit int) ([]LeaderboardRef, bool, error) {
	fams, _ := LeaderboardFamilies(c)
	if len(fams) == 0 {
		return nil, false, nil
	}
	if limit <= 0 {
		limit = DefaultListLimit
	}
	cls := c.Classifier()
	type dbKey struct {
		db  int
		key string
	}
	seen := map[dbKey]bool{}
	var out []LeaderboardRef
	truncated := false
	scanned := map[dbKey]bool{} // (db, match) pairs already walked
scans:
	for _, f := range fams {
		dbs := f.DBs
		if dbs == nil {
			dbs = c.Pack().SampleDBs()
		}
		match := lbGlobEscape(lbLiteralPrefix(f.Pattern)) + "*"
		for _, db := range dbs {
			if scanned[dbKey{db, match}] {
				continue
			}
			scanned[dbKey{db, match}] = true
			cl := c.DB(db)
			var cursor uint64
			for {
				keys, next, err := cl.Scan(ctx, cursor, match, leaderboardScanCount).Result()
				if err != nil {
					if isOutOfRange(err) {
						break // the server has fewer databases
					}
					return nil, false, c.wrapErr(err)
				}
				for _, k := range keys {
					m, ok := cls.Match(db, k)
					if !ok || m.Family.Role != schema.RoleLeaderboard || seen[dbKey{db, k}] {
						continue
					}
					if len(out) == limit {
						truncated = true
						break scans
					}
					seen[dbKey{db, k}] = true
					out = append(out, LeaderboardRef{DB: db, Key: k, Family: m.Family})
				}
				cursor = next
				if cursor == 0 {
					break
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b LeaderboardRef) int {
		if a.DB != b.DB {
			return a.DB - b.DB
		}
		return strings.Compare(a.Key, b.Key)
	})
	return out, truncated, nil
}

// SummarizeLeaderboards reads ZCARD and the top entry (ZREVRANGE 0 0
// WITHSCORES, or ZRANGE for order asc) of every key in one pipelined round
// trip, selecting each database in turn. Keys that vanished are left out;
// keys of the wrong type are kept with Err set.
func SummarizeLeaderboards(ctx context.Context, c *Conn, refs []LeaderboardRef) ([]LeaderboardSummary, error) {
	if len(refs) == 0 {
		return nil, nil
	}
	order := make([]int, len(refs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return refs[a].DB - refs[b].DB })
	cards := make([]*redis.IntCmd, len(refs))
	tops := make([]*redis.ZSliceCmd, len(refs))
	p := c.multi.Pipeline()
	cur := -1
	for _, i := range order {
		r := refs[i]
		if r.DB != cur {
			p.Select(ctx, r.DB)
			cur = r.DB
		}
		cards[i] = p.ZCard(ctx, r.Key)
		if r.Family == nil || !r.Family.Sensitive {
			tops[i] = lbZRange(ctx, p, r.Key, 0, 0, lbFamilyDesc(r.Family))
		}
	}
	_, err := p.Exec(ctx)
	if isConnErr(err) {
		return nil, c.wrapErr(err)
	}
	out := make([]LeaderboardSummary, 0, len(refs))
	for i, r := range refs {
		s := LeaderboardSummary{DB: r.DB, Key: r.Key, Desc: lbFamilyDesc(r.Family)}
		if r.Family != nil {
			s.Family = r.Family.ID
		}
		n, err := cards[i].Result()
		if err != nil {
			s.Size, s.Err = -1, c.safeErr(err)
			out = append(out, s)
			continue
		}
		if n == 0 {
			continue // deleted since the scan: a sorted set is never empty
		}
		s.Size = n
		if tops[i] == nil {
			s.Sensitive = true // its members are never read, not even the top one
		} else if zs, err := tops[i].Result(); err == nil && len(zs) > 0 {
			s.TopMember, s.TopScore, s.HasTop = lbMember(zs[0].Member), zs[0].Score, true
		}
		out = append(out, s)
	}
	return out, nil
}

// zrangeWithScores queues ZREVRANGE (desc) or ZRANGE start stop WITHSCORES;
// not ZRANGE … REV, which servers before 6.2 lack.
func lbZRange(ctx context.Context, p redis.Pipeliner, key string, start, stop int64, desc bool) *redis.ZSliceCmd {
	if desc {
		return p.ZRevRangeWithScores(ctx, key, start, stop)
	}
	return p.ZRangeWithScores(ctx, key, start, stop)
}

func lbFamilyDesc(f *schema.Family) bool {
	if f == nil {
		return true
	}
	p, _ := f.Params.(*schema.LeaderboardParams)
	return p == nil || p.Order != "asc"
}

// literalPrefix is the pattern's literal text before its first placeholder.
func lbLiteralPrefix(p *schema.Pattern) string {
	src := p.String() // pack syntax: {{ }} and $$ escape literal { } $
	var b strings.Builder
	for i := 0; i < len(src); i++ {
		switch {
		case (src[i] == '{' || src[i] == '}' || src[i] == '$') && i+1 < len(src) && src[i+1] == src[i]:
			b.WriteByte(src[i])
			i++
		case src[i] == '{':
			return b.String()
		default:
			b.WriteByte(src[i])
		}
	}
	return b.String()
}

// globEscape quotes the bytes SCAN MATCH treats specially.
func lbGlobEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '*', '?', '[', ']', '\\':
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// Entry is one row of a leaderboard.
type Entry struct {
	Rank   int64 // 0-based position in display order
	Member string
	Score  float64
	Meta   map[string]string // companion hash fields, nil when none/absent
	// MetaTruncated: the hash had more than MetaFieldCap fields; Meta holds
	// MetaFieldCap of them.
	MetaTruncated bool
}

// Window is a run of consecutive entries of one leaderboard.
type Window struct {
	DB         int
	Key        string
	Family     string // "" when the pack does not call the key a leaderboard
	Size       int64  // ZCARD
	Start      int64  // rank of Entries[0]
	Entries    []Entry
	MetaFields []string // field names to show, in order
	Desc       bool
	Retained   int    // entries the application keeps (0: unbounded or unknown)
	MetaWhy    string // why no metadata is read, "" when it is
	Path       string // how it was read: "lua" (one round trip) or "pipeline"
}

// Find returns the entry of member in the window.
func (w Window) Find(member string) (Entry, bool) {
	for _, e := range w.Entries {
		if e.Member == member {
			return e, true
		}
	}
	return Entry{}, false
}

// LeaderboardPlan is what the pack says about one leaderboard key: its
// order and how to name each member's metadata and high-score keys.
type LeaderboardPlan struct {
	DB       int
	Key      string
	Family   *schema.Family // nil: the pack does not call the key a leaderboard
	Params   *schema.LeaderboardParams
	Desc     bool
	MetaWhy  string   // why there is no metadata, "" when there is
	Fields   []string // from the meta family's params, nil when not listed
	vars     map[string]string
	member   string
	metaMode int // lbMetaNone, lbMetaAny or lbMetaNoColon: how the script builds keys
	prefix   string
	suffix   string
}

const (
	lbMetaNone    = 0 // the script reads no metadata
	lbMetaAny     = 1 // meta key = prefix .. member .. suffix, member non-empty
	lbMetaNoColon = 2 // the same, for members without ':' only
)

// lbSentinel stands for the member while the meta key template is
// built; it is accepted by the classes the script can check (any, segment).
const lbSentinel = "\x01keydeck-member\x01"

// PlanLeaderboard classifies key and works out how to read its rows.
func PlanLeaderboard(c *Conn, db int, key string) LeaderboardPlan {
	pl := LeaderboardPlan{DB: db, Key: key, Desc: true}
	cls := c.Classifier()
	if cls == nil {
		pl.MetaWhy = "no schema pack: the key is read as a plain sorted set"
		return pl
	}
	m, ok := cls.Match(db, key)
	if !ok || m.Family.Role != schema.RoleLeaderboard {
		pl.MetaWhy = "the schema pack does not call this key a leaderboard"
		return pl
	}
	pl.Family, pl.vars = m.Family, m.Map()
	params, _ := m.Family.Params.(*schema.LeaderboardParams)
	pl.Params = params
	if params == nil {
		pl.MetaWhy = "the leaderboard family has no parameters"
		return pl
	}
	pl.Desc = params.Order != "asc"
	if params.Meta == nil {
		pl.MetaWhy = "the leaderboard family names no metadata hash"
		return pl
	}
	if params.Meta.Family != nil && params.Meta.Family.Sensitive {
		// Never read, so never shown nor sent: every read path checks the
		// sensitivity of each key it touches, companions included.
		pl.MetaWhy = "the metadata family (" + params.Meta.Family.ID + ") is sensitive: its values are never shown"
		return pl
	}
	if mp, ok := params.Meta.Family.Params.(*schema.LeaderboardMetaParams); ok && len(mp.Fields) > 0 {
		pl.Fields = slices.Clone(mp.Fields)
	}
	refPhs, famPhs := params.Meta.Pattern.Placeholders(), params.Meta.Family.Pattern.Placeholders()
	mode := lbMetaNone
	for i, ph := range refPhs {
		if ph.Name == params.Member {
			// The script can build keys whose member placeholder takes any
			// non-empty text, or any without ':'; other classes (digits,
			// fixed lengths, base64) are left to Go.
			if i < len(famPhs) && famPhs[i].Len == 0 {
				switch famPhs[i].Class {
				case schema.ClassAny:
					mode = lbMetaAny
				case schema.ClassSegment:
					mode = lbMetaNoColon
				}
			}
			continue
		}
		if _, ok := pl.vars[ph.Name]; !ok {
			pl.MetaWhy = "the metadata pattern needs {" + ph.Name + "}, which the leaderboard key does not hold"
			return pl
		}
	}
	if mode == lbMetaNone {
		pl.member = params.Member // keys built per member by Go
		return pl
	}
	vars := maps.Clone(pl.vars)
	vars[params.Member] = lbSentinel
	tmpl, err := params.Meta.Key(vars)
	if err != nil {
		// A leaderboard value does not fit the meta pattern (a game id with
		// ':' where the meta family wants a segment): no member of this
		// board has a metadata key.
		pl.MetaWhy = "no metadata key can be built for this leaderboard: " + err.Error()
		return pl
	}
	pl.member = params.Member
	if strings.Count(tmpl, lbSentinel) == 1 {
		pl.prefix, pl.suffix, _ = strings.Cut(tmpl, lbSentinel)
		pl.metaMode = mode
	}
	return pl
}

// HasMeta reports whether members of this leaderboard have metadata keys.
func (pl LeaderboardPlan) HasMeta() bool { return pl.member != "" }

// MetaKey is the metadata hash of member; false when the pack names none
// or the member cannot fill the pattern (a ':' where a segment is wanted).
func (pl LeaderboardPlan) MetaKey(member string) (string, bool) {
	if !pl.HasMeta() {
		return "", false
	}
	return pl.companion(pl.Params.Meta, member)
}

// HighScoreKey is member's cached best score key; false when there is none.
func (pl LeaderboardPlan) HighScoreKey(member string) (string, bool) {
	if pl.Params == nil || pl.Params.HighScore == nil || pl.Params.Member == "" || pl.Family == nil {
		return "", false
	}
	return pl.companion(pl.Params.HighScore, member)
}

func (pl LeaderboardPlan) companion(ref *schema.Ref, member string) (string, bool) {
	vars := maps.Clone(pl.vars)
	if vars == nil {
		vars = map[string]string{}
	}
	vars[pl.Params.Member] = member
	k, err := ref.Key(vars)
	return k, err == nil
}

// scriptable reports whether the whole read fits one script: metadata is
// read and its keys can be built by the script from a template.
func (pl LeaderboardPlan) scriptable() bool { return pl.HasMeta() && pl.metaMode != lbMetaNone }

// lbWindowScript reads a window and its rows' metadata in one round trip.
// ARGV: start, stop, "desc"|"asc", meta mode, key prefix, key suffix, field
// cap. Metadata keys are built here from a template, so they are not in
// KEYS: fine on a standalone server, which is what Keydeck reads. Each hash
// is read with one HSCAN step (the whole hash when it is small) and cut at
// the cap; a cursor "1" marks a cut hash. Read-only: run with EVAL_RO.
var lbWindowScript = redis.NewScript(`
local key = KEYS[1]
local n = redis.call('ZCARD', key)
local r
if ARGV[3] == 'desc' then
  r = redis.call('ZREVRANGE', key, ARGV[1], ARGV[2], 'WITHSCORES')
else
  r = redis.call('ZRANGE', key, ARGV[1], ARGV[2], 'WITHSCORES')
end
local mode = ARGV[4]
local metas = {}
if mode ~= '0' then
  local prefix, suffix, cap = ARGV[5], ARGV[6], tonumber(ARGV[7])
  for i = 1, #r, 2 do
    local m = r[i]
    local h = {'0', {}}
    if m ~= '' and (mode ~= '2' or not string.find(m, ':', 1, true)) then
      h = redis.call('HSCAN', prefix .. m .. suffix, '0', 'COUNT', ARGV[7])
      if #h[2] > 2 * cap then
        local cut = {}
        for j = 1, 2 * cap do cut[j] = h[2][j] end
        h = {'1', cut}
      end
    end
    metas[#metas + 1] = h
  end
end
return {n, r, metas}
`)

// How a connection's server runs the window script.
type lbScriptMode int

const (
	lbScriptEvalRO  lbScriptMode = iota // EVALSHA_RO / EVAL_RO (Redis 7+)
	lbScriptEval                        // EVALSHA / EVAL (no _RO variants)
	lbScriptRefused                     // scripts refused: pipelines
)

type lbScriptState struct {
	mu    sync.Mutex
	mode  lbScriptMode
	since time.Time
	why   string
}

// lbScriptStates remembers, per connection, how its server runs scripts.
var lbScriptStates sync.Map // *Conn → *lbScriptState

func lbScriptStateOf(c *Conn) *lbScriptState {
	if s, ok := lbScriptStates.Load(c); ok {
		return s.(*lbScriptState)
	}
	s, _ := lbScriptStates.LoadOrStore(c, &lbScriptState{})
	return s.(*lbScriptState)
}

func (s *lbScriptState) get(now time.Time) lbScriptMode {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mode == lbScriptRefused && now.Sub(s.since) > lbScriptRetry {
		s.mode, s.why = lbScriptEvalRO, "" // try again: the ACL may have changed
	}
	return s.mode
}

func (s *lbScriptState) set(m lbScriptMode, why string, now time.Time) {
	s.mu.Lock()
	s.mode, s.why, s.since = m, why, now
	s.mu.Unlock()
}

// LeaderboardScriptStatus says how the connection reads leaderboard windows:
// "" while scripts work, else why it uses two pipelined round trips.
func LeaderboardScriptStatus(c *Conn) string {
	s := lbScriptStateOf(c)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.why
}

// ReadLeaderboard reads entries [start, start+count) in display order
// (highest first unless the family says order asc) with their metadata.
// count <= 0 means DefaultWindow; it is capped at MaxWindow.
//
// Cost: one round trip when the leaderboard has templatable metadata and the
// server runs scripts (a read-only script: ZCARD, ZREVRANGE start stop
// WITHSCORES, one HSCAN per member's metadata hash); otherwise a pipeline of
// ZCARD and ZREVRANGE, then, when there is metadata, a pipeline of HSCANs.
// A server that refuses scripts (ACL, unknown command) is remembered per
// connection and read with pipelines, retried after a few minutes.
func ReadLeaderboard(ctx context.Context, c *Conn, db int, key string, start, count int64) (Window, error) {
	return PlanLeaderboard(c, db, key).Read(ctx, c, start, count)
}

// Read reads a window of the planned leaderboard (see ReadLeaderboard).
func (pl LeaderboardPlan) Read(ctx context.Context, c *Conn, start, count int64) (Window, error) {
	if start < 0 {
		start = 0
	}
	if count <= 0 {
		count = DefaultWindow
	}
	count = min(count, MaxWindow)
	w := Window{DB: pl.DB, Key: pl.Key, Start: start, Desc: pl.Desc, MetaWhy: pl.MetaWhy}
	if pl.Family != nil {
		w.Family = pl.Family.ID
	}
	if pl.Params != nil {
		w.Retained = pl.Params.Retained
	}
	stop := start + count - 1
	if pl.scriptable() {
		st := lbScriptStateOf(c)
		for {
			mode := st.get(time.Now())
			if mode == lbScriptRefused {
				break
			}
			err := pl.readScript(ctx, c, mode, start, stop, &w)
			if err == nil {
				w.Path = "lua"
				pl.finish(&w)
				return w, nil
			}
			if isConnErr(err) {
				return Window{}, c.wrapErr(err)
			}
			msg := strings.ToLower(err.Error())
			if mode == lbScriptEvalRO && strings.Contains(msg, "unknown command") {
				st.set(lbScriptEval, "", time.Now())
				continue
			}
			// Refused (NOPERM, unknown command, scripting disabled) or
			// failed: read with pipelines. If they work, the script is
			// what the server objects to; remember that.
			w2, perr := pl.readPipeline(ctx, c, start, stop, w)
			if perr != nil {
				return Window{}, perr
			}
			name := "EVAL_RO"
			if mode == lbScriptEval {
				name = "EVAL"
			}
			why := refusal(name, err)
			st.set(lbScriptRefused, why+"; leaderboards are read with two pipelined round trips", time.Now())
			c.log.Warn("leaderboard script refused, using pipelines", "err", c.safeErr(err))
			return w2, nil
		}
	}
	w, err := pl.readPipeline(ctx, c, start, stop, w)
	if err != nil {
		return Window{}, err
	}
	return w, nil
}

func (pl LeaderboardPlan) readScript(ctx context.Context, c *Conn, mode lbScriptMode, start, stop int64, w *Window) error {
	order := "desc"
	if !pl.Desc {
		order = "asc"
	}
	args := []any{start, stop, order, pl.metaMode, pl.prefix, pl.suffix, MetaFieldCap}
	keys := []string{pl.Key}
	cl := c.DB(pl.DB)
	var cmd *redis.Cmd
	if mode == lbScriptEvalRO {
		cmd = lbWindowScript.RunRO(ctx, cl, keys, args...)
	} else {
		cmd = lbWindowScript.Run(ctx, cl, keys, args...)
	}
	v, err := cmd.Result()
	if err != nil {
		return err
	}
	parts, ok := v.([]any)
	if !ok || len(parts) != 3 {
		return lbBadReply("script reply is not {n, range, metas}")
	}
	n, ok := parts[0].(int64)
	if !ok {
		return lbBadReply("script reply: ZCARD is not an integer")
	}
	flat, _ := parts[1].([]any)
	metas, _ := parts[2].([]any)
	if len(flat)%2 != 0 || len(metas) != len(flat)/2 {
		return lbBadReply("script reply: range and metadata do not line up")
	}
	w.Size = n
	w.Entries = make([]Entry, 0, len(flat)/2)
	for i := 0; i < len(flat); i += 2 {
		m, _ := flat[i].(string)
		s, _ := flat[i+1].(string)
		score, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return lbBadReply("script reply: score " + strconv.Quote(s))
		}
		e := Entry{Rank: w.Start + int64(i/2), Member: m, Score: score}
		if h, ok := metas[i/2].([]any); ok && len(h) == 2 {
			cursor, _ := h[0].(string)
			fields, _ := h[1].([]any)
			strs := make([]string, 0, len(fields))
			for _, f := range fields {
				fs, _ := f.(string)
				strs = append(strs, fs)
			}
			e.Meta, e.MetaTruncated = lbMetaMap(strs, cursor != "0")
		}
		w.Entries = append(w.Entries, e)
	}
	return nil
}

// lbReplyErr is a reply Keydeck did not expect; it is not a connection error
// (isConnErr), so the read falls back to pipelines.
type lbReplyErr string

func (e lbReplyErr) Error() string { return "leaderboard: " + string(e) }
func (lbReplyErr) RedisError()     {}

func lbBadReply(msg string) error { return lbReplyErr(msg) }

var _ redis.Error = lbReplyErr("")

// readPipeline reads the window with ZCARD + ZREVRANGE, then the metadata
// hashes with one HSCAN step each, in two pipelined round trips.
func (pl LeaderboardPlan) readPipeline(ctx context.Context, c *Conn, start, stop int64, w Window) (Window, error) {
	w.Path = "pipeline"
	cl := c.DB(pl.DB)
	var card *redis.IntCmd
	var rng *redis.ZSliceCmd
	_, err := cl.Pipelined(ctx, func(p redis.Pipeliner) error {
		card = p.ZCard(ctx, pl.Key)
		rng = lbZRange(ctx, p, pl.Key, start, stop, pl.Desc)
		return nil
	})
	if err != nil {
		return Window{}, c.wrapErr(err)
	}
	w.Size = card.Val()
	zs := rng.Val()
	w.Entries = make([]Entry, len(zs))
	for i, z := range zs {
		w.Entries[i] = Entry{Rank: start + int64(i), Member: lbMember(z.Member), Score: z.Score}
	}
	if pl.HasMeta() && len(zs) > 0 {
		scans := make([]*redis.ScanCmd, len(zs))
		_, err := cl.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, e := range w.Entries {
				if k, ok := pl.MetaKey(e.Member); ok {
					scans[i] = p.HScan(ctx, k, 0, "", MetaFieldCap)
				}
			}
			return nil
		})
		if isConnErr(err) {
			return Window{}, c.wrapErr(err)
		}
		for i, sc := range scans {
			if sc == nil {
				continue
			}
			fields, cursor, err := sc.Result()
			if err != nil {
				continue // not a hash: shown without metadata
			}
			w.Entries[i].Meta, w.Entries[i].MetaTruncated = lbMetaMap(fields, cursor != 0)
		}
	}
	pl.finish(&w)
	return w, nil
}

// metaMap turns HSCAN's field/value list into a map of at most MetaFieldCap
// fields; more says the hash had more.
func lbMetaMap(flat []string, more bool) (map[string]string, bool) {
	if len(flat) > 2*MetaFieldCap {
		flat, more = flat[:2*MetaFieldCap], true
	}
	if len(flat) < 2 {
		return nil, more
	}
	m := make(map[string]string, len(flat)/2)
	for i := 0; i+1 < len(flat); i += 2 {
		m[flat[i]] = flat[i+1]
	}
	return m, more
}

// finish fills the fields to show: the meta family's list, else every field
// seen, sorted.
func (pl LeaderboardPlan) finish(w *Window) {
	if !pl.HasMeta() {
		return
	}
	if len(pl.Fields) > 0 {
		w.MetaFields = slices.Clone(pl.Fields)
		return
	}
	seen := map[string]bool{}
	for _, e := range w.Entries {
		for f := range e.Meta {
			if !seen[f] {
				seen[f] = true
				w.MetaFields = append(w.MetaFields, f)
			}
		}
	}
	slices.Sort(w.MetaFields)
}

func lbMember(m any) string {
	switch v := m.(type) {
	case string:
		return v
	case []byte:
		return string(v)
	case nil:
		return ""
	}
	return fmt.Sprint(m)
}

// LookupMember finds member: its rank (ZREVRANK, or ZRANK for order asc),
// and a window of up to around entries on each side (capped at
// MaxLookupAround) holding its score and metadata. found is false when the
// member is absent; w then carries the leaderboard's size only. Two round
// trips: the rank, then the window (ReadLeaderboard). When the member moved
// between the two, rank is its place in the window read.
func LookupMember(ctx context.Context, c *Conn, db int, key, member string, around int64) (w Window, rank int64, found bool, err error) {
	pl := PlanLeaderboard(c, db, key)
	around = max(0, min(around, MaxLookupAround))
	cl := c.DB(db)
	var rk *redis.IntCmd
	var card *redis.IntCmd
	_, err = cl.Pipelined(ctx, func(p redis.Pipeliner) error {
		if pl.Desc {
			rk = p.ZRevRank(ctx, key, member)
		} else {
			rk = p.ZRank(ctx, key, member)
		}
		card = p.ZCard(ctx, key)
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return Window{}, 0, false, c.wrapErr(err)
	}
	rank, err = rk.Result()
	if errors.Is(err, redis.Nil) {
		w = Window{DB: db, Key: key, Size: card.Val(), Desc: pl.Desc, MetaWhy: pl.MetaWhy}
		if pl.Family != nil {
			w.Family = pl.Family.ID
		}
		return w, -1, false, nil
	}
	if err != nil {
		return Window{}, 0, false, c.wrapErr(err)
	}
	start := max(0, rank-around)
	w, err = pl.Read(ctx, c, start, rank+around-start+1)
	if err != nil {
		return Window{}, 0, false, err
	}
	if e, ok := w.Find(member); ok {
		rank = e.Rank
	}
	return w, rank, true, nil
}

// MoveKind says how a row moved between two reads.
type MoveKind int

const (
	MoveSame MoveKind = iota // same rank
	MoveUp                   // closer to the top (smaller rank)
	MoveDown                 // further from the top
	MoveNew                  // not in the previous read
)

func (k MoveKind) String() string {
	switch k {
	case MoveSame:
		return "same"
	case MoveUp:
		return "up"
	case MoveDown:
		return "down"
	case MoveNew:
		return "new"
	}
	return "MoveKind(" + strconv.Itoa(int(k)) + ")"
}

// Move is how one member of the current read moved.
type Move struct {
	Kind         MoveKind
	From         int64 // previous rank, -1 for new
	ScoreChanged bool  // false for new
}

// Moves compares two reads of the same window and says, per member of cur,
// how it moved. "New" means absent from prev: a new entry, or one that
// entered the window from outside it.
func Moves(prev, cur []Entry) map[string]Move {
	before := make(map[string]Entry, len(prev))
	for _, e := range prev {
		before[e.Member] = e
	}
	out := make(map[string]Move, len(cur))
	for _, e := range cur {
		p, ok := before[e.Member]
		if !ok {
			out[e.Member] = Move{Kind: MoveNew, From: -1}
			continue
		}
		m := Move{Kind: MoveSame, From: p.Rank, ScoreChanged: p.Score != e.Score}
		switch {
		case e.Rank < p.Rank:
			m.Kind = MoveUp
		case e.Rank > p.Rank:
			m.Kind = MoveDown
		}
		out[e.Member] = m
	}
	return out
}
