package leaderboard

import (
	"context"
	"slices"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/schema"
)

// Summary is one leaderboard in the list.
type Summary struct {
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

// Ref names one leaderboard key found by Scan.
type Ref struct {
	DB     int
	Key    string
	Family *schema.Family
}

// Families returns the families with role leaderboard in the
// connection's pack, or none with the reason why.
func Families(c *redisview.Conn) ([]*schema.Family, string) {
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

// Scan walks, in each leaderboard family's databases, the keys
// matching the family pattern's literal prefix (SCAN MATCH prefix* COUNT
// 500) and keeps those the classifier puts in a leaderboard family: a longer
// pattern with the same prefix (mg:score:leaderboard:refresh:rate:…) is
// another family. It stops at the first key past limit and reports
// truncated. The result is sorted by database and key. A server with many
// keys under the prefix costs one SCAN round trip per 500 keys visited, so
// callers that refresh the list often should rescan rarely and call
// Summarize on the keys they have.
func Scan(ctx context.Context, c *redisview.Conn, limit int) ([]Ref, bool, error) {
	fams, _ := Families(c)
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
	var out []Ref
	truncated := false
	scanned := map[dbKey]bool{} // (db, match) pairs already walked
scans:
	for _, f := range fams {
		dbs := f.DBs
		if dbs == nil {
			dbs = c.Pack().SampleDBs()
		}
		match := schema.EscapeGlob(literalPrefix(f.Pattern)) + "*"
		for _, db := range dbs {
			if scanned[dbKey{db, match}] {
				continue
			}
			scanned[dbKey{db, match}] = true
			cl := c.DB(db)
			cursor := redisview.CursorStart
			for {
				keys, next, err := redisview.ScanStep(ctx, cl, cursor, match, scanCount, "")
				if err != nil {
					if redisview.IsOutOfRange(err) {
						break // the server has fewer databases
					}
					return nil, false, c.WrapErr(err)
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
					out = append(out, Ref{DB: db, Key: k, Family: m.Family})
				}
				cursor = next
				if cursor.Done() {
					break
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b Ref) int {
		if a.DB != b.DB {
			return a.DB - b.DB
		}
		return strings.Compare(a.Key, b.Key)
	})
	return out, truncated, nil
}

// Summarize reads ZCARD and the top entry (ZREVRANGE 0 0
// WITHSCORES, or ZRANGE for order asc) of every key in one pipelined round
// trip, selecting each database in turn. Keys that vanished are left out;
// keys of the wrong type are kept with Err set.
func Summarize(ctx context.Context, c *redisview.Conn, refs []Ref) ([]Summary, error) {
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
	p := c.CrossDBPipeline()
	cur := -1
	// A refused SELECT leaves the connection on another database: the
	// replies of the commands after it are not this database's.
	selects := map[int]*redis.StatusCmd{}
	for _, i := range order {
		r := refs[i]
		if r.DB != cur {
			selects[r.DB] = p.Select(ctx, r.DB)
			cur = r.DB
		}
		cards[i] = p.ZCard(ctx, r.Key)
		if r.Family == nil || !r.Family.Sensitive {
			tops[i] = zrange(ctx, p, r.Key, 0, 0, familyDesc(r.Family))
		}
	}
	_, err := p.Exec(ctx)
	if redisview.IsConnErr(err) {
		return nil, c.WrapErr(err)
	}
	out := make([]Summary, 0, len(refs))
	for i, r := range refs {
		s := Summary{DB: r.DB, Key: r.Key, Desc: familyDesc(r.Family)}
		if r.Family != nil {
			s.Family = r.Family.ID
		}
		n, err := cards[i].Result()
		if serr := selects[r.DB].Err(); serr != nil {
			err = serr
		}
		if err != nil {
			s.Size, s.Err = -1, c.SafeErr(err)
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
			s.TopMember, s.TopScore, s.HasTop = memberString(zs[0].Member), zs[0].Score, true
		}
		out = append(out, s)
	}
	return out, nil
}

// zrange queues ZREVRANGE (desc) or ZRANGE start stop WITHSCORES;
// not ZRANGE … REV, which servers before 6.2 lack.
func zrange(ctx context.Context, p redis.Pipeliner, key string, start, stop int64, desc bool) *redis.ZSliceCmd {
	if desc {
		return p.ZRevRangeWithScores(ctx, key, start, stop)
	}
	return p.ZRangeWithScores(ctx, key, start, stop)
}

func familyDesc(f *schema.Family) bool {
	if f == nil {
		return true
	}
	p, _ := f.Params.(*schema.LeaderboardParams)
	return p == nil || p.Order != "asc"
}

// literalPrefix is the pattern's literal text before its first placeholder.
func literalPrefix(p *schema.Pattern) string {
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
