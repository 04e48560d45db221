package action

import (
	"context"
	"encoding/hex"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/views/format"
)

// MemberPlan is implemented by a plan that acts on a part of a key rather
// than on the whole key: a member of a sorted set (a leaderboard row) or of
// a set (a name on a ban list), a field of a hash, or some bits of a string
// (a bloom filter's). For each key it names, the Runner's state is that
// part's (MemberState), never the whole key's:
//
//   - the fingerprint covers the key's exact name and type and the part
//     (the member and its exact score, the field and its value, the bits),
//     so another member's write (a live leaderboard takes many a second) is
//     no change, but a change to this part is;
//   - no DUMP is taken or recorded: the intent's Target carries the part as
//     it was (Target.Member) instead of a serialized million-member board or
//     a 125 KB bloom, and undo puts that part back;
//   - the key is still WATCHed. WATCH cannot watch one member, so EXEC also
//     fails when another part changed; the Runner then reads the state
//     again and, if every fingerprint still equals the preview's, retries
//     (memberRetries times) instead of failing with ErrChanged. The part
//     therefore cannot change between the read that compares it and the
//     EXEC that writes it, which a check without WATCH could not promise.
//
// Why not a Lua script (check the part, write, DEL in one EVAL): the same
// reasons commit gives (EVAL is often not granted, and DUMP/RESTORE of the
// companion keys cannot run in scripts everywhere), and a script could not
// make MULTI roll back the other keys' writes when the check failed.
type MemberPlan interface {
	Plan
	// Members names, by key, the part the action acts on; keys not in the
	// map have whole-key state.
	Members() map[string]MemberRef
}

// Part kinds: what a MemberRef names inside its key.
const (
	PartZMember = ""     // a sorted-set member (records before parts had kinds)
	PartSMember = "set"  // a set member
	PartHField  = "hash" // a hash field
	// PartBits: bits of a string, by offset. Undo sets each bit back; it
	// cannot shrink a string that setting a bit past its end grew, so a
	// kind acting on bits stays within the string (a bloom filter is
	// allocated whole).
	PartBits = "bits"
)

// maxPartBits bounds the offsets one part names (a bloom filter sets a
// handful per item).
const maxPartBits = 64

// MemberRef is the part of a key a MemberPlan acts on.
type MemberRef struct {
	Kind string // PartZMember, PartSMember, PartHField or PartBits
	// Name is the member or the field; for bits, what they stand for (the
	// banned name), shown in messages only.
	Name string
	Bits []int64 // PartBits: the offsets
	// Desc (sorted sets): ranks count from the highest score (ZREVRANK), as
	// in a leaderboard of order desc; otherwise from the lowest (ZRANK).
	Desc bool
}

// keyType is the Redis type a key holding this part has.
func (m MemberRef) keyType() string {
	switch m.Kind {
	case PartSMember:
		return "set"
	case PartHField:
		return "hash"
	case PartBits:
		return "string"
	}
	return "zset"
}

// MemberState is one part of a key as Keydeck read it (State) or recorded
// it (Target). Name and Value are attacker-controlled: views escape them.
type MemberState struct {
	Kind    string `json:"kind,omitempty"`
	Name    string `json:"name"`
	Present bool   `json:"present"`
	// Score is a sorted-set member's exact score, formatted to read back as
	// the same double ("1200", "3.5", "1e+21", "-Inf"); "" when absent. A
	// string, so that an infinite score survives JSON.
	Score string `json:"score,omitempty"`
	// Value is a hash field's value ("" when absent; never recorded for a
	// sensitive key).
	Value string `json:"-"`
	// Offsets and Bits: the bits a PartBits names and their values ("0"/"1"
	// per offset, in order). Present is true when any is set.
	Offsets []int64 `json:"offsets,omitempty"`
	Bits    string  `json:"bits,omitempty"`
	// Rank is 0-based in the order of MemberRef.Desc; -1 absent or unknown.
	// Informative only: other members move it, so it is not fingerprinted.
	Rank int64 `json:"rank"`
}

// memberRetries bounds the extra attempts of a MemberPlan's transaction
// when EXEC failed but the state it guards is still the previewed one. A
// board taking hundreds of writes a second can abort many attempts in a
// row when Keydeck's host is slow (ten were not enough for a board written
// every 2 ms while the host was loaded: TestRemoveLeaderboardEntryLiveBoard
// under CI); each attempt is two round trips plus a pause of up to 3 ms, so
// thirty stay well under a second.
const memberRetries = 29

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

// memberReads are the commands that read one part's state.
type memberReads struct {
	score      *redis.FloatCmd  // sorted set
	card, rank *redis.IntCmd    // card: the key's size, for the preview
	isMember   *redis.BoolCmd   // set
	exists     *redis.BoolCmd   // hash field
	strlen     *redis.IntCmd    // hash field length, read before its value
	value      *redis.StringCmd // hash field value (transactions only, see readStates)
	bits       []*redis.IntCmd  // GETBIT per offset
}

// queueMemberReads queues the reads of m in key. ranked adds what only a
// preview shows (size, rank). A hash field's value is read in a second
// trip once its length is known (withValue: inside a transaction, where
// the value is the one the action itself wrote or left).
func queueMemberReads(ctx context.Context, pipe redis.Pipeliner, key string, m *MemberRef, ranked, withValue bool) memberReads {
	var r memberReads
	switch m.Kind {
	case PartSMember:
		r.isMember = pipe.SIsMember(ctx, key, m.Name)
		if ranked {
			r.card = pipe.SCard(ctx, key)
		}
	case PartHField:
		if withValue {
			r.value = pipe.HGet(ctx, key, m.Name)
		} else {
			r.exists = pipe.HExists(ctx, key, m.Name)
			r.strlen = pipe.HStrLen(ctx, key, m.Name)
		}
		if ranked {
			r.card = pipe.HLen(ctx, key)
		}
	case PartBits:
		for _, off := range m.Bits {
			r.bits = append(r.bits, pipe.GetBit(ctx, key, off))
		}
		if ranked {
			r.card = pipe.StrLen(ctx, key)
		}
	default:
		r.score = pipe.ZScore(ctx, key, m.Name)
		if ranked {
			r.card = pipe.ZCard(ctx, key)
			if m.Desc {
				r.rank = pipe.ZRevRank(ctx, key, m.Name)
			} else {
				r.rank = pipe.ZRank(ctx, key, m.Name)
			}
		}
	}
	return r
}

// fill sets s.Member (and s.Size) from the replies; s.Type must be set. A
// key of another type has no such part: the reads fail with WRONGTYPE and
// the part is absent, while the type in the fingerprint tells it apart.
func (r memberReads) fill(s *State, m *MemberRef) error {
	ms := &MemberState{Kind: m.Kind, Name: m.Name, Rank: -1}
	s.Member = ms
	if m.Kind == PartBits {
		ms.Offsets = slices.Clone(m.Bits)
	}
	if s.Type != m.keyType() {
		return nil
	}
	what := func(cmd string) string { return cmd + " of " + quoteKey(s.Key) }
	switch m.Kind {
	case PartSMember:
		ok, err := r.isMember.Result()
		if err != nil {
			return redisErr("reading "+what("SISMEMBER"), err)
		}
		ms.Present = ok
		s.Unit = "members"
	case PartHField:
		if r.value != nil {
			v, err := r.value.Result()
			switch {
			case err == redis.Nil:
			case err != nil:
				return redisErr("reading "+what("HGET"), err)
			default:
				ms.Present, ms.Value = true, v
			}
		} else {
			ok, err := r.exists.Result()
			if err != nil {
				return redisErr("reading "+what("HEXISTS"), err)
			}
			ms.Present = ok // its value is read in the next trip, its length known
		}
		s.Unit = "fields"
	case PartBits:
		var b strings.Builder
		for _, c := range r.bits {
			v, err := c.Result()
			if err != nil {
				return redisErr("reading "+what("GETBIT"), err)
			}
			b.WriteString(strconv.FormatInt(v, 10))
			ms.Present = ms.Present || v == 1
		}
		ms.Bits = b.String()
		s.Unit = "bytes"
	default:
		// Redis sends a score as the shortest (7.2+) or a 17-digit decimal,
		// or a RESP3 double: either reads back as the stored double exactly.
		switch f, err := r.score.Result(); {
		case err == redis.Nil:
		case err != nil:
			return redisErr("reading "+what("ZSCORE"), err)
		case math.IsNaN(f):
			return redisf("Redis replied NaN to ZSCORE of %s", quoteKey(s.Key))
		default:
			ms.Present, ms.Score = true, formatScore(f)
		}
		s.Unit = "members"
		if r.rank != nil && ms.Present && r.rank.Err() == nil {
			ms.Rank = r.rank.Val()
		}
	}
	if r.card != nil && r.card.Err() == nil {
		s.Size = r.card.Val()
	}
	return nil
}

// readFieldValues reads, in one round trip, the value of each hash field a
// part names, now that its length is known: a value longer than an audit
// record may hold is refused unread.
func (r *Runner) readFieldValues(ctx context.Context, p pipeliner, conn *redisview.Conn, db int, states []State, reads []memberReads) error {
	values := make([]*redis.StringCmd, len(states))
	lim := int64(r.opts.MaxPriorBytes)
	for i, s := range states {
		m := s.Member
		if m == nil || m.Kind != PartHField || !m.Present || reads[i].strlen == nil {
			continue
		}
		n, err := reads[i].strlen.Result()
		if err != nil {
			return redisErr("reading HSTRLEN of "+quoteKey(s.Key), err)
		}
		if lim > 0 && n > lim {
			return invalidf("field %s of %s holds %s, more than the %s an audit record may hold, so it could not be undone",
				quoteKey(m.Name), quoteKey(s.Key), format.Bytes(n), format.Bytes(lim))
		}
		values[i] = &redis.StringCmd{}
	}
	if err := pipelined(ctx, p, conn, db, func(pipe redis.Pipeliner) {
		for i, s := range states {
			if values[i] != nil {
				values[i] = pipe.HGet(ctx, s.Key, s.Member.Name)
			}
		}
	}); err != nil {
		return err
	}
	for i := range states {
		if values[i] == nil {
			continue
		}
		m := states[i].Member
		switch v, err := values[i].Result(); {
		case err == redis.Nil:
			m.Present = false // deleted between the trips; under WATCH, EXEC fails
		case err != nil:
			return redisErr("reading HGET of "+quoteKey(states[i].Key), err)
		default:
			m.Value = v
		}
	}
	return nil
}

// memberFingerprint identifies a part's state: the key's exact name and
// type, the part's kind and name, and what it holds (a member's exact
// score, a field's value, the bits). A member or field that is not there
// (in a key of its type, or in no key at all) is fpAbsent. Keyed like
// fingerprint for a sensitive key; version 1 (see fingerprintV) left out the
// key's name.
func (r *Runner) memberFingerprint(s State, v int) string {
	m := s.Member
	if !m.Present && m.Kind != PartBits && (s.Type == "none" || s.Type == MemberRef{Kind: m.Kind}.keyType()) {
		return fpAbsent
	}
	h, prefix := r.fpHash(s, v)
	h.Write([]byte("keydeck-fp-v1\x00member\x00" + s.Type + "\x00"))
	if v >= 2 {
		writeName(h, s.Key)
		if m.Kind != PartZMember {
			h.Write([]byte("part:" + m.Kind + "\x00"))
		}
	}
	h.Write([]byte(strconv.Itoa(len(m.Name)) + ":" + m.Name + "\x00"))
	switch {
	case m.Kind == PartHField && m.Present:
		writeName(h, m.Value)
	case m.Kind == PartBits:
		for _, off := range m.Offsets {
			h.Write([]byte(strconv.FormatInt(off, 10) + ","))
		}
		h.Write([]byte("bits:" + m.Bits))
	case m.Present:
		h.Write([]byte("score:" + m.Score))
	}
	return prefix + hex.EncodeToString(h.Sum(nil))
}

// memberShape describes a part's state: "score 1200, rank #3", "value of
// 12 bytes", "bits 101101", "absent".
func memberShape(m *MemberState) string {
	switch {
	case m == nil:
		return "absent"
	case m.Kind == PartBits:
		return "bits " + m.Bits
	case !m.Present:
		return "absent"
	case m.Kind == PartSMember:
		return "present"
	case m.Kind == PartHField:
		return fmt.Sprintf("value of %d bytes", len(m.Value))
	case m.Rank >= 0:
		return fmt.Sprintf("score %s, rank #%d", m.Score, m.Rank+1)
	}
	return "score " + m.Score
}

// partNoun names a part in messages: "member", "field", "bits for".
func partNoun(kind string) string {
	switch kind {
	case PartHField:
		return "field"
	case PartBits:
		return "bits for"
	}
	return "member"
}
