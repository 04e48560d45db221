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
