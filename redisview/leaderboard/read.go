package leaderboard

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
)

const (
	// MaxWindow caps the entries one read returns.
	MaxWindow = 500
	// DefaultWindow is the window size when a caller asks for count <= 0.
	DefaultWindow = 50
	// MaxLookupAround caps the neighbours Lookup reads on each side.
	MaxLookupAround = (MaxWindow - 1) / 2
	// MetaFieldCap caps the fields read from one member's metadata hash.
	// The hash is small by schema; a hash that is not is read with one
	// HSCAN step (COUNT MetaFieldCap) and cut at MetaFieldCap fields, so a
	// corrupt or hostile hash costs the server and Keydeck a bounded amount.
	MetaFieldCap = 32
	// DefaultListLimit is the key cap of List for limit <= 0, and of an Index.
	DefaultListLimit = 1000
	// scanCount is the SCAN COUNT of List.
	scanCount = 500
)

// ErrSensitive: the key belongs to a sensitive family, whose values are
// never read for a page (a leaderboard page reads any sorted set it is
// named).
var ErrSensitive = errors.New("this key belongs to a sensitive family: its values are never shown")

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
	// MetaLabels and MetaFormats are the pack's column titles and value
	// meanings by field (schema.LeaderboardMetaParams); read-only.
	MetaLabels  map[string]string
	MetaFormats map[string]string
	Desc        bool
	Retained    int    // entries the application keeps (0: unbounded or unknown)
	MetaWhy     string // why no metadata is read, "" when it is
	Path        string // how it was read: "lua" (one round trip) or "pipeline"
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

// windowScript reads a window and its rows' metadata in one round trip.
// ARGV: start, stop, "desc"|"asc", meta mode, key prefix, key suffix, field
// cap. Metadata keys are built here from a template, so they are not in
// KEYS: fine on a standalone server, which is what Keydeck reads. Each hash
// is read with one HSCAN step (the whole hash when it is small) and cut at
// the cap; a cursor "1" marks a cut hash. Read-only: run with EVAL_RO.
var windowScript = redis.NewScript(`
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

// Read reads entries [start, start+count) in display order
// (highest first unless the family says order asc) with their metadata.
// count <= 0 means DefaultWindow; it is capped at MaxWindow.
//
// Cost: one round trip when the leaderboard has templatable metadata and the
// server runs scripts (a read-only script: ZCARD, ZREVRANGE start stop
// WITHSCORES, one HSCAN per member's metadata hash); otherwise a pipeline of
// ZCARD and ZREVRANGE, then, when there is metadata, a pipeline of HSCANs.
// A server that refuses scripts (ACL, unknown command) is remembered per
// connection and read with pipelines, retried after a few minutes.
func Read(ctx context.Context, c *redisview.Conn, db int, key string, start, count int64) (Window, error) {
	if c.Sensitive(db, key) {
		return Window{}, ErrSensitive
	}
	return NewPlan(c, db, key).Read(ctx, c, start, count)
}

// Read reads a window of the planned leaderboard (see the function Read).
func (pl Plan) Read(ctx context.Context, c *redisview.Conn, start, count int64) (Window, error) {
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
		st := c.Scripts()
		for {
			mode := st.Mode(time.Now())
			if mode == redisview.ScriptRefused {
				break
			}
			err := pl.readScript(ctx, c, mode, start, stop, &w)
			if err == nil {
				w.Path = "lua"
				pl.finish(&w)
				return w, nil
			}
			if redisview.IsConnErr(err) {
				return Window{}, c.WrapErr(err)
			}
			msg := strings.ToLower(err.Error())
			if mode == redisview.ScriptEvalRO && strings.Contains(msg, "unknown command") {
				st.Set(redisview.ScriptEval, "", time.Now())
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
			if mode == redisview.ScriptEval {
				name = "EVAL"
			}
			why := redisview.Refusal(name, err)
			st.Set(redisview.ScriptRefused, why+"; leaderboards are read with two pipelined round trips", time.Now())
			c.Log().Warn("leaderboard script refused, using pipelines", "err", c.SafeErr(err))
			return w2, nil
		}
	}
	w, err := pl.readPipeline(ctx, c, start, stop, w)
	if err != nil {
		return Window{}, err
	}
	return w, nil
}

// scriptCalls is how many commands windowScript called for the range it
// returned (flat: member, score, …): ZCARD, the range, and one HSCAN per
// member whose metadata key it built. The server counts them among its
// commands; Keydeck reports them as its own (redisview.Conn.ScriptCalls).
func (pl Plan) scriptCalls(flat []any) int64 {
	n := int64(2)
	if pl.metaMode == metaNone {
		return n
	}
	for i := 0; i < len(flat); i += 2 {
		m, _ := flat[i].(string)
		if m != "" && (pl.metaMode != metaNoColon || !strings.Contains(m, ":")) {
			n++
		}
	}
	return n
}

func (pl Plan) readScript(ctx context.Context, c *redisview.Conn, mode redisview.ScriptMode, start, stop int64, w *Window) error {
	order := "desc"
	if !pl.Desc {
		order = "asc"
	}
	args := []any{start, stop, order, pl.metaMode, pl.prefix, pl.suffix, MetaFieldCap}
	keys := []string{pl.Key}
	cl := c.DB(pl.DB)
	var cmd *redis.Cmd
	if mode == redisview.ScriptEvalRO {
		cmd = windowScript.RunRO(ctx, cl, keys, args...)
	} else {
		cmd = windowScript.Run(ctx, cl, keys, args...)
	}
	v, err := cmd.Result()
	if err != nil {
		return err
	}
	parts, ok := v.([]any)
	if !ok || len(parts) != 3 {
		return badReply("script reply is not {n, range, metas}")
	}
	n, ok := parts[0].(int64)
	if !ok {
		return badReply("script reply: ZCARD is not an integer")
	}
	flat, _ := parts[1].([]any)
	metas, _ := parts[2].([]any)
	if len(flat)%2 != 0 || len(metas) != len(flat)/2 {
		return badReply("script reply: range and metadata do not line up")
	}
	c.ScriptCalls(pl.scriptCalls(flat))
	w.Size = n
	w.Entries = make([]Entry, 0, len(flat)/2)
	for i := 0; i < len(flat); i += 2 {
		m, _ := flat[i].(string)
		s, _ := flat[i+1].(string)
		score, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return badReply("script reply: score " + strconv.Quote(s))
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
			e.Meta, e.MetaTruncated = metaMap(strs, cursor != "0")
		}
		w.Entries = append(w.Entries, e)
	}
	return nil
}

// replyErr is a reply Keydeck did not expect; it is not a connection error
// (isConnErr), so the read falls back to pipelines.
type replyErr string

func (e replyErr) Error() string { return "leaderboard: " + string(e) }
func (replyErr) RedisError()     {}

func badReply(msg string) error { return replyErr(msg) }

var _ redis.Error = replyErr("")

// readPipeline reads the window with ZCARD + ZREVRANGE, then the metadata
// hashes with one HSCAN step each, in two pipelined round trips.
func (pl Plan) readPipeline(ctx context.Context, c *redisview.Conn, start, stop int64, w Window) (Window, error) {
	w.Path = "pipeline"
	cl := c.DB(pl.DB)
	var card *redis.IntCmd
	var rng *redis.ZSliceCmd
	_, err := cl.Pipelined(ctx, func(p redis.Pipeliner) error {
		card = p.ZCard(ctx, pl.Key)
		rng = zrange(ctx, p, pl.Key, start, stop, pl.Desc)
		return nil
	})
	if err != nil {
		return Window{}, c.WrapErr(err)
	}
	w.Size = card.Val()
	zs := rng.Val()
	w.Entries = make([]Entry, len(zs))
	for i, z := range zs {
		w.Entries[i] = Entry{Rank: start + int64(i), Member: memberString(z.Member), Score: z.Score}
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
		if redisview.IsConnErr(err) {
			return Window{}, c.WrapErr(err)
		}
		for i, sc := range scans {
			if sc == nil {
				continue
			}
			fields, cursor, err := sc.Result()
			if err != nil {
				continue // not a hash: shown without metadata
			}
			w.Entries[i].Meta, w.Entries[i].MetaTruncated = metaMap(fields, cursor != 0)
		}
	}
	pl.finish(&w)
	return w, nil
}

// metaMap turns HSCAN's field/value list into a map of at most MetaFieldCap
// fields; more says the hash had more.
func metaMap(flat []string, more bool) (map[string]string, bool) {
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
func (pl Plan) finish(w *Window) {
	if !pl.HasMeta() {
		return
	}
	w.MetaLabels, w.MetaFormats = pl.Labels, pl.Formats
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

func memberString(m any) string {
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

// Lookup finds member: its rank (ZREVRANK, or ZRANK for order asc),
// and a window of up to around entries on each side (capped at
// MaxLookupAround) holding its score and metadata. found is false when the
// member is absent; w then carries the leaderboard's size only. Two round
// trips: the rank, then the window (Read). When the member moved
// between the two, rank is its place in the window read.
// It fails with ErrSensitive, or with an error that is redisview.ErrRead.
func Lookup(ctx context.Context, c *redisview.Conn, db int, key, member string, around int64) (w Window, rank int64, found bool, err error) {
	if c.Sensitive(db, key) {
		return Window{}, 0, false, ErrSensitive
	}
	w, rank, found, err = lookup(ctx, c, db, key, member, around)
	if err != nil && !errors.Is(err, redisview.ErrRead) {
		err = c.WrapErr(redisview.ReadError("looking the member up", err))
	}
	return w, rank, found, err
}

func lookup(ctx context.Context, c *redisview.Conn, db int, key, member string, around int64) (w Window, rank int64, found bool, err error) {
	pl := NewPlan(c, db, key)
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
		return Window{}, 0, false, c.WrapErr(err)
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
		return Window{}, 0, false, c.WrapErr(err)
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
