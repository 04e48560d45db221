package search

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/schema"
)

// round reads probes (TYPE, PTTL; GETRANGE of string indexes and, when
// follow is false, of string records), boards (rank, score) and, when
// bans, the ban checks: every database's in one pipeline, each after its
// SELECT. It returns the values read to follow.
func (r *UserResult) round(ctx context.Context, conn *redisview.Conn, pack *schema.Pack, probes []UserProbe, boards []Board, dbs []int, bans bool) ([]link, error) {
	reads := roundReads(pack, probes, boards, dbs, bans)
	if len(reads) == 0 {
		return nil, nil
	}
	// One database needs no SELECT: its own client's pipeline.
	cross := len(reads) > 1
	pipe := conn.DB(reads[0].db).Pipeline()
	if cross {
		pipe = conn.CrossDBPipeline()
	}
	queued := make([]*dbCmds, len(reads))
	for i, rd := range reads {
		queued[i] = r.queueDB(ctx, pipe, conn, rd, cross)
	}
	cmds, err := pipe.Exec(ctx)
	r.Commands += len(cmds)
	if err := redisview.PipelineErr(cmds, err); err != nil {
		return nil, redisview.ReadError("reading the user's keys", err)
	}
	var links []link
	for i, rd := range reads {
		// A failed SELECT leaves the connection on the database before:
		// its replies would be another database's.
		if sel := queued[i].sel; sel != nil && sel.Err() != nil {
			err := sel.Err()
			return nil, redisview.ReadError(fmt.Sprintf("reading the user's keys in db%d", rd.db), err)
		}
		ls, err := r.finishDB(rd, queued[i], bans)
		if err != nil {
			return nil, err
		}
		links = append(links, ls...)
	}
	return links, nil
}

// dbReads are one database's reads of a round.
type dbReads struct {
	db     int
	probes []UserProbe
	boards []Board
	ban    []*schema.Family
}

// roundReads groups a round's reads by database, ascending.
func roundReads(pack *schema.Pack, probes []UserProbe, boards []Board, dbs []int, bans bool) []*dbReads {
	byDB := map[int]*dbReads{}
	get := func(db int) *dbReads {
		if byDB[db] == nil {
			byDB[db] = &dbReads{db: db}
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
	out := make([]*dbReads, 0, len(byDB))
	for _, rd := range byDB {
		out = append(out, rd)
	}
	slices.SortFunc(out, func(a, b *dbReads) int { return a.db - b.db })
	return out
}

// dbCmds are one database's commands queued on the round's pipeline.
type dbCmds struct {
	sel    *redis.StatusCmd // nil: the pipeline is the database's own
	types  []*redis.StatusCmd
	ttls   []*redis.DurationCmd
	vals   []*redis.StringCmd
	metas  []*redis.SliceCmd
	ranks  []*redis.IntCmd
	scores []*redis.FloatCmd
	bans   []banCmds
}

// banCmds are one ban check's commands.
type banCmds struct {
	bits  []*redis.IntCmd
	exist *redis.IntCmd
	in    *redis.BoolCmd
	check BanCheck
}

// queueDB queues rd's reads on pipe, after a SELECT of its database when
// the pipeline is cross-database.
func (r *UserResult) queueDB(ctx context.Context, pipe redis.Pipeliner, conn *redisview.Conn, rd *dbReads, cross bool) *dbCmds {
	db := rd.db
	q := &dbCmds{types: make([]*redis.StatusCmd, len(rd.probes)), ttls: make([]*redis.DurationCmd, len(rd.probes)),
		vals: make([]*redis.StringCmd, len(rd.probes)), metas: make([]*redis.SliceCmd, len(rd.probes)),
		ranks: make([]*redis.IntCmd, len(rd.boards)), scores: make([]*redis.FloatCmd, len(rd.boards))}
	if cross {
		q.sel = pipe.Select(ctx, db)
	}
	for i, p := range rd.probes {
		q.types[i] = pipe.Type(ctx, p.Key)
		q.ttls[i] = pipe.PTTL(ctx, p.Key)
		if conn.Sensitive(db, p.Key) {
			continue // its name, type and TTL only
		}
		if shown(p.Family) {
			// One byte past maxLinkValue tells a value too long to
			// follow (and one cut for showing) without a STRLEN.
			q.vals[i] = pipe.GetRange(ctx, p.Key, 0, maxLinkValue)
		}
		if mp, ok := p.Family.Params.(*schema.LeaderboardMetaParams); ok && p.Family.Type == "hash" && !p.Family.Sensitive && len(mp.Fields) > 0 {
			q.metas[i] = pipe.HMGet(ctx, p.Key, mp.Fields...)
		}
	}
	for i, b := range rd.boards {
		if sensitiveBoard(conn, b) {
			continue // neither rank nor score
		}
		if familyDesc(b.Family) {
			q.ranks[i] = pipe.ZRevRank(ctx, b.Key, r.Subject.Name)
		} else {
			q.ranks[i] = pipe.ZRank(ctx, b.Key, r.Subject.Name)
		}
		q.scores[i] = pipe.ZScore(ctx, b.Key, r.Subject.Name)
	}
	for _, f := range rd.ban {
		q.bans = append(q.bans, r.queueBan(ctx, pipe, conn, db, f))
	}
	return q
}

// queueBan queues the check of the name against the ban bloom f in db.
func (r *UserResult) queueBan(ctx context.Context, pipe redis.Pipeliner, conn *redisview.Conn, db int, f *schema.Family) banCmds {
	bp := f.Params.(*schema.BloomParams)
	bc := banCmds{check: BanCheck{DB: db, Bloom: f, BloomKey: f.Pattern.String()}}
	bc.check.BloomKey, _ = f.Key(nil)
	if bp.Members != nil && bp.Members.Family != nil && len(bp.Members.Pattern.Placeholders()) == 0 {
		bc.check.Set, bc.check.HasSet = bp.Members.Family, true
		bc.check.SetKey, _ = bp.Members.Pattern.Key(nil)
	}
	if f.Sensitive || conn.Sensitive(db, bc.check.BloomKey) || bc.check.HasSet && (bc.check.Set.Sensitive || conn.Sensitive(db, bc.check.SetKey)) {
		// Neither bits nor membership: a verdict would tell what the
		// sensitive list holds.
		bc.check.Sensitive = true
		return bc
	}
	bc.check.Positions = redisview.BloomPositions(r.Subject.Name, bp.Bits, bp.Hashes)
	for _, pos := range bc.check.Positions {
		bc.bits = append(bc.bits, pipe.GetBit(ctx, bc.check.BloomKey, pos))
	}
	bc.exist = pipe.Exists(ctx, bc.check.BloomKey)
	if bc.check.HasSet {
		bc.in = pipe.SIsMember(ctx, bc.check.SetKey, r.Subject.Name)
	}
	return bc
}

// finishDB takes in the replies of rd's reads (q): the keys there, the
// ranks, the ban checks. It returns the values read to follow.
func (r *UserResult) finishDB(rd *dbReads, q *dbCmds, bans bool) ([]link, error) {
	var links []link
	for i, p := range rd.probes {
		t, err := q.types[i].Result()
		if err != nil {
			return nil, redisview.ReadError(fmt.Sprintf("reading TYPE in db%d", rd.db), err)
		}
		if t == "none" {
			continue
		}
		h := UserHit{Hit: Hit{DB: rd.db, Key: p.Key, Family: p.Family, Type: t, TTL: ttlOf(q.ttls[i])}, Via: p.Via}
		if q.vals[i] != nil && t == "string" {
			v, err := q.vals[i].Result()
			n := len(v) // the length, when below maxLinkValue; else at least it
			if err == nil && v != "" && n < maxLinkValue && (p.Family.Role == schema.RoleIndex || !bans && p.Family.Role == schema.RoleRecord) {
				links = append(links, link{db: rd.db, key: p.Key, fam: p.Family, value: v})
			}
			if err == nil {
				h.Value, h.Cut = v, n > maxShown
				if len(h.Value) > maxShown {
					h.Value = h.Value[:maxShown]
				}
			}
		}
		if q.metas[i] != nil && t == "hash" {
			h.Fields = metaFields(p.Family, q.metas[i])
		}
		r.Hits = append(r.Hits, h)
	}
	for i, b := range rd.boards {
		rk := Rank{Board: b, Desc: familyDesc(b.Family)}
		if q.ranks[i] == nil {
			rk.Sensitive = true
		} else if n, err := q.ranks[i].Result(); err == nil {
			rk.Found, rk.Rank = true, n
			rk.Score, _ = q.scores[i].Result()
		} else if err != redis.Nil {
			rk.Err = redisview.Refusal("ZRANK", err)
		}
		r.Ranks = append(r.Ranks, rk)
	}
	for _, bc := range q.bans {
		r.Bans = append(r.Bans, bc.finish())
	}
	return links, nil
}

// metaFields are a leaderboard row's details read (HMGET), each cut to
// maxShown.
func metaFields(f *schema.Family, cmd *redis.SliceCmd) []Field {
	vs, err := cmd.Result()
	if err != nil {
		return nil
	}
	var out []Field
	for j, name := range f.Params.(*schema.LeaderboardMetaParams).Fields {
		if sv, ok := vs[j].(string); ok {
			if len(sv) > maxShown {
				sv = sv[:maxShown]
			}
			out = append(out, Field{Name: name, Value: sv})
		}
	}
	return out
}

// finish is the ban check from its replies.
func (bc banCmds) finish() BanCheck {
	c := bc.check
	if c.Sensitive {
		return c
	}
	if err := bc.refused(); err != "" {
		c.Err, c.Verdict = err, "not read: "+err
		return c
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
	return c
}

// refused says which read of the check the server refused, if any.
func (bc banCmds) refused() string {
	for _, b := range bc.bits {
		if err := b.Err(); err != nil && err != redis.Nil {
			return redisview.Refusal("GETBIT", err)
		}
	}
	if err := bc.exist.Err(); err != nil {
		return redisview.Refusal("EXISTS", err)
	}
	if bc.in != nil {
		if err := bc.in.Err(); err != nil {
			return redisview.Refusal("SISMEMBER", err)
		}
	}
	return ""
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
