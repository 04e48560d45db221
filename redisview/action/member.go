package action

import (
	"context"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// MemberPlan is implemented by a plan that acts on one member of a sorted
// set rather than on the whole key: a leaderboard row. For each key it
// names, the Runner's state is that member's (ZSCORE, plus its rank and the
// set's size for the preview), never the whole key's:
//
//   - the fingerprint covers the key's type, the member and its exact
//     score, so another member's ZADD (a live leaderboard takes many a
//     second) is no change, but a new score for this member is;
//   - no DUMP is taken or recorded: the intent's Target carries the member
//     and its score (Target.Member) instead of a serialized million-member
//     board, and undo puts that one member back;
//   - the key is still WATCHed. WATCH cannot watch one member, so EXEC also
//     fails when another member changed; the Runner then reads the state
//     again and, if every fingerprint still equals the preview's, retries
//     (memberRetries times) instead of failing with ErrChanged. The
//     member's score therefore cannot change between the read that
//     compares it and the EXEC that removes it, which a check without
//     WATCH could not promise.
//
// Why not a Lua script (check the score, ZREM, DEL in one EVAL): the same
// reasons commit gives (EVAL is often not granted, and DUMP/RESTORE of the
// companion keys cannot run in scripts everywhere), and a script could not
// make MULTI roll back the other keys' writes when the check failed.
type MemberPlan interface {
	Plan
	// Members names, by key, the sorted-set member the action acts on;
	// keys not in the map have whole-key state.
	Members() map[string]MemberRef
}

// MemberRef is the member a MemberPlan acts on.
type MemberRef struct {
	Name string
	// Desc: ranks count from the highest score (ZREVRANK), as in a
	// leaderboard of order desc; otherwise from the lowest (ZRANK).
	Desc bool
}

// MemberState is one member of a sorted set as Keydeck read it (State) or
// recorded it (Target). Name is attacker-controlled: views escape it.
type MemberState struct {
	Name    string `json:"name"`
	Present bool   `json:"present"`
	// Score is the exact score, formatted to read back as the same double
	// ("1200", "3.5", "1e+21", "-Inf"); "" when absent. A string, so that
	// an infinite score survives JSON.
	Score string `json:"score,omitempty"`
	// Rank is 0-based in the order of MemberRef.Desc; -1 absent or unknown.
	// Informative only: other members move it, so it is not fingerprinted.
	Rank int64 `json:"rank"`
}

// memberRetries bounds the extra attempts of a MemberPlan's transaction
// when EXEC failed but the state it guards is still the previewed one. A
// board taking hundreds of writes a second can abort a few attempts in a
// row; each attempt is two round trips, so even ten stay well under a
// second.
const memberRetries = 9

// Annotated is implemented by plans with something to say on the
// confirmation step beyond their changes (Preview.Notes).
type Annotated interface{ Notes() []string }

// memberRefs lists, per key, the member p acts on (nil: whole-key state).
func memberRefs(p Plan, keys []string) []*MemberRef {
	mp, ok := p.(MemberPlan)
	if !ok {
		return nil
	}
	all := mp.Members()
	if len(all) == 0 {
		return nil
	}
	out := make([]*MemberRef, len(keys))
	for i, k := range keys {
		if m, ok := all[k]; ok {
			out[i] = &m
		}
	}
	return out
}

func memberAt(members []*MemberRef, i int) *MemberRef {
	if i < len(members) {
		return members[i]
	}
	return nil
}

// formatScore renders a score so that ParseFloat gives it back exactly.
func formatScore(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// parseScore reads a score as Redis replies it or as formatScore wrote it.
func parseScore(s string) (float64, bool) {
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil && !math.IsNaN(f)
}

// memberReads are the commands that read one member's state.
type memberReads struct {
	score      *redis.FloatCmd
	card, rank *redis.IntCmd
}

func queueMemberReads(ctx context.Context, pipe redis.Pipeliner, key string, m *MemberRef, ranked bool) memberReads {
	var r memberReads
	r.score = pipe.ZScore(ctx, key, m.Name)
	if ranked {
		r.card = pipe.ZCard(ctx, key)
		if m.Desc {
			r.rank = pipe.ZRevRank(ctx, key, m.Name)
		} else {
			r.rank = pipe.ZRank(ctx, key, m.Name)
		}
	}
	return r
}

// fill sets s.Member (and s.Size) from the replies; s.Type must be set. A
// key of another type has no members: the reads fail with WRONGTYPE, and
// the member is absent, while the type in the fingerprint tells it apart.
func (r memberReads) fill(s *State, m *MemberRef) error {
	ms := &MemberState{Name: m.Name, Rank: -1}
	s.Member = ms
	if s.Type != "zset" {
		return nil
	}
	// Redis sends a score as the shortest (7.2+) or a 17-digit decimal, or
	// a RESP3 double: either reads back as the stored double exactly.
	switch f, err := r.score.Result(); {
	case err == redis.Nil:
	case err != nil:
		return redisErr("reading ZSCORE of "+quoteKey(s.Key), err)
	case math.IsNaN(f):
		return redisf("Redis replied NaN to ZSCORE of %s", quoteKey(s.Key))
	default:
		ms.Present, ms.Score = true, formatScore(f)
	}
	if r.card != nil && r.card.Err() == nil {
		s.Size, s.Unit = r.card.Val(), "members"
	}
	if r.rank != nil && ms.Present && r.rank.Err() == nil {
		ms.Rank = r.rank.Val()
	}
	return nil
}

// memberFingerprint identifies a member's state: the key's exact name and
// type, the member and its exact score. A member that is not there (in a
// sorted set, or in no key at all) is fpAbsent. Keyed like fingerprint for a
// sensitive key; version 1 (see fingerprintV) left out the key's name.
func (r *Runner) memberFingerprint(s State, v int) string {
	m := s.Member
	if !m.Present && (s.Type == "zset" || s.Type == "none") {
		return fpAbsent
	}
	h, prefix := r.fpHash(s, v)
	h.Write([]byte("keydeck-fp-v1\x00member\x00" + s.Type + "\x00"))
	if v >= 2 {
		writeName(h, s.Key)
	}
	h.Write([]byte(strconv.Itoa(len(m.Name)) + ":" + m.Name + "\x00"))
	if m.Present {
		h.Write([]byte("score:" + m.Score))
	}
	return prefix + hex.EncodeToString(h.Sum(nil))
}

// memberShape describes a member's state: "score 1200, rank #3", "absent".
func memberShape(m *MemberState) string {
	if m == nil || !m.Present {
		return "absent"
	}
	if m.Rank >= 0 {
		return fmt.Sprintf("score %s, rank #%d", m.Score, m.Rank+1)
	}
	return "score " + m.Score
}
