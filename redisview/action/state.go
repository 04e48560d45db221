package action

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/views/format"
)

// State is one key as Keydeck read it just before acting. Its serialized
// value (DUMP) stays inside this package and is stripped from the states a
// Preview or Outcome carries; a sensitive key's Excerpt is always empty.
type State struct {
	Key       string `json:"key"`
	Type      string `json:"type"`             // as TYPE reports it; "none" when absent
	PTTL      int64  `json:"pttl"`             // ms remaining; -1 no TTL; -2 absent
	Size      int64  `json:"size"`             // in Unit; -1 unknown
	Unit      string `json:"unit,omitempty"`   // "bytes", "fields", "items", "members", "entries"
	Family    string `json:"family,omitempty"` // schema family id; "" unclassified
	Role      string `json:"role,omitempty"`   // schema role
	Sensitive bool   `json:"sensitive,omitempty"`
	// Excerpt is the start of a non-sensitive string value, for previews
	// (a lock shows its holder). Attacker-controlled: views escape it.
	Excerpt   string `json:"excerpt,omitempty"`
	Truncated bool   `json:"truncated,omitempty"` // Excerpt is not the whole value
	// Member is set when the action acts on one member of this sorted set
	// (MemberPlan): the state is that member's, Size the set's cardinality,
	// PTTL the key's; the key's value is neither read nor recorded.
	Member *MemberState `json:"member,omitempty"`

	dump     []byte    // DUMP payload; nil when absent or snapshotted
	snap     *Snapshot // the value element-wise, where DUMP is refused
	expireAt int64     // PEXPIRETIME ms; 0 none; -1 the server cannot say
	fp       string
	fpLegacy string // version 1, for records written before (see matches)
}

// Exists reports whether the key was there.
func (s State) Exists() bool { return s.Type != "none" }

// TTL is the remaining lifetime and whether the key has one.
func (s State) TTL() (time.Duration, bool) {
	if s.PTTL < 0 {
		return 0, false
	}
	return time.Duration(s.PTTL) * time.Millisecond, true
}

// Shape describes the key without its value: "hash, 12 fields, TTL 4m 10s".
func (s State) Shape() string {
	if !s.Exists() {
		return "absent"
	}
	out := s.Type
	if s.Size >= 0 && s.Unit != "" {
		out += fmt.Sprintf(", %d %s", s.Size, s.Unit)
	}
	return out + ", " + s.ttlText()
}

func (s State) ttlText() string {
	if d, ok := s.TTL(); ok {
		return "TTL " + format.Duration(d)
	}
	return "no TTL"
}

const excerptBytes = 200

// lengthCmd is the O(1) size command per type.
func lengthCmd(ctx context.Context, p redis.Pipeliner, typ, key string) (*redis.IntCmd, string) {
	switch typ {
	case "string":
		return p.StrLen(ctx, key), "bytes"
	case "hash":
		return p.HLen(ctx, key), "fields"
	case "list":
		return p.LLen(ctx, key), "items"
	case "set":
		return p.SCard(ctx, key), "members"
	case "zset":
		return p.ZCard(ctx, key), "members"
	case "stream":
		return p.XLen(ctx, key), "entries"
	}
	return nil, ""
}

// pipeliner is what both a plain client (preview) and a WATCHing Tx
// (execution) offer: reads on one connection in one round trip.
type pipeliner interface {
	Pipelined(ctx context.Context, fn func(redis.Pipeliner) error) ([]redis.Cmder, error)
}

// Bounds on what reading a key's prior value may cost. The decision to
// DUMP a key rests on exact figures only: STRLEN for a string; for an
// aggregate its element count (O(1)) and then MEMORY USAGE … SAMPLES 0,
// which walks every element (O(elements), bounded by maxPriorElements)
// and counts each one's bytes. Redis's default sampled estimate looks at
// five elements: a list of a few small and a dozen 10 MB elements passes
// it, and its DUMP then blocks the server for a second and pulls the whole
// value into Keydeck.
const (
	// maxPriorElements: an aggregate with more elements is not DUMPed
	// (its serialized form would exceed any sensible audit record anyway).
	maxPriorElements = 100_000
	// rawPerPrior: the exact in-memory size may exceed the serialized
	// limit this many times (DUMP compresses), never more.
	rawPerPrior = 4
)

// readStates reads every key in pipelined round trips: shape and expiry;
// the exact length; the exact memory of aggregates small enough to measure;
// then DUMP, only of keys whose exact size allows it, and an excerpt.
// Under WATCH every trip sees the state the transaction will replace, or
// EXEC fails.
//
// A key members names (MemberPlan) is read in the first trip only: its
// type, PTTL, the member's score and rank and the set's size; never its
// DUMP, nor its memory, so a sorted set of any size can be acted on.
func (r *Runner) readStates(ctx context.Context, p pipeliner, conn *redisview.Conn, db int, plan Plan, keys []string) ([]State, error) {
	states, err := r.readShapes(ctx, p, conn, db, plan, keys)
	if err != nil {
		return nil, err
	}
	sizes, mems, err := measure(ctx, p, conn, db, states, r.opts.MaxPriorBytes)
	if err != nil {
		return nil, err
	}
	if err := checkSizes(states, sizes, mems, int64(r.opts.MaxPriorBytes)); err != nil {
		return nil, err
	}
	snapped, err := readDumps(ctx, p, conn, db, plan, states, int64(r.opts.MaxPriorBytes))
	if err != nil {
		return nil, err
	}
	if err := r.readSnapshots(ctx, p, conn, db, states, snapped); err != nil {
		return nil, err
	}
	for i := range states {
		r.fingerprints(&states[i])
	}
	return states, nil
}

// shapeReads is the first trip's replies for one key: its type, PTTL and
// either its expiry time or, for a key members names, the member's reads.
type shapeReads struct {
	typ        *redis.StatusCmd
	pttlN, exp *redis.IntCmd
	member     memberReads
}

// readShapes is the first trip: each key's type, PTTL, expiry time and
// family (or its member's reads), then the fields plan names; if any key is
// sensitive, every key is.
func (r *Runner) readShapes(ctx context.Context, p pipeliner, conn *redisview.Conn, db int, plan Plan, keys []string) ([]State, error) {
	members := memberRefs(plan, keys)
	firsts := make([]shapeReads, len(keys))
	cmds, err := p.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		for i, k := range keys {
			f := &firsts[i]
			f.typ = pipe.Type(ctx, k)
			f.pttlN = redis.NewIntCmd(ctx, "pttl", k)
			_ = pipe.Process(ctx, f.pttlN)
			if m := memberAt(members, i); m != nil {
				f.member = queueMemberReads(ctx, pipe, k, m, true, false)
				continue
			}
			f.exp = redis.NewIntCmd(ctx, "pexpiretime", k)
			_ = pipe.Process(ctx, f.exp)
		}
		return nil
	})
	if err := redisview.PipelineErr(cmds, err); err != nil {
		return nil, redisErr(where(conn, db), err)
	}
	var cls *schema.Classifier
	if conn != nil {
		cls = conn.Classifier()
	}
	states := make([]State, len(keys))
	parts := make([]memberReads, len(firsts))
	for i, k := range keys {
		if states[i], err = firsts[i].state(k, db, cls, memberAt(members, i)); err != nil {
			return nil, err
		}
		// Before the first sampling there is no classifier yet, but every
		// key is withheld (Conn.Sensitive).
		if conn != nil && conn.Sensitive(db, k) {
			states[i].Sensitive = true
		}
		parts[i] = firsts[i].member
	}
	if err := r.readFieldValues(ctx, p, conn, db, states, parts); err != nil {
		return nil, err
	}
	// The keys of one action describe one thing (a leaderboard entry: the
	// board, its metadata, its cached high score): if any is sensitive, so
	// is what the others say about it.
	if slices.ContainsFunc(states, func(s State) bool { return s.Sensitive }) {
		for i := range states {
			states[i].Sensitive = true
		}
	}
	return states, nil
}

// state is key k as the first trip read it (m: the member it names, if any).
func (f shapeReads) state(k string, db int, cls *schema.Classifier, m *MemberRef) (State, error) {
	if err := f.typ.Err(); err != nil {
		return State{}, redisErr("reading TYPE of "+quoteKey(k), err)
	}
	if err := f.pttlN.Err(); err != nil {
		return State{}, redisErr("reading PTTL of "+quoteKey(k), err)
	}
	s := State{Key: k, Type: f.typ.Val(), PTTL: f.pttlN.Val(), Size: -1}
	if cls != nil {
		if fam, ok := cls.Classify(db, k); ok {
			s.Family, s.Role, s.Sensitive = fam.ID, string(fam.Role), fam.Sensitive
		}
	}
	if !s.Exists() {
		s.PTTL = -2
	}
	if m != nil {
		if err := f.member.fill(&s, m); err != nil {
			return State{}, err
		}
		return s, nil
	}
	switch err := f.exp.Err(); {
	case err == nil:
		s.expireAt = max(f.exp.Val(), 0) // -1 no TTL, -2 absent: both mean "no expiry time"
	case isUnsupported(err):
		s.expireAt = -1 // before Redis 7, or not granted: fingerprints fall back to has-a-TTL
	default:
		return State{}, redisErr("reading PEXPIRETIME of "+quoteKey(k), err)
	}
	return s, nil
}

// whole is a key the action reads entire: one that exists and that no
// member names.
func whole(s State) bool { return s.Exists() && s.Member == nil }

// measure reads the exact length of each whole key, which also bounds what
// measuring memory costs, then the exact memory of aggregates small enough
// to measure (limit: MaxPriorBytes; 0 measures none).
func measure(ctx context.Context, p pipeliner, conn *redisview.Conn, db int, states []State, limit int) (sizes, mems []*redis.IntCmd, err error) {
	sizes = make([]*redis.IntCmd, len(states))
	if err := pipelined(ctx, p, conn, db, func(pipe redis.Pipeliner) {
		for i, s := range states {
			if whole(s) {
				sizes[i], states[i].Unit = lengthCmd(ctx, pipe, s.Type, s.Key)
			}
		}
	}); err != nil {
		return nil, nil, err
	}
	mems = make([]*redis.IntCmd, len(states))
	if err := pipelined(ctx, p, conn, db, func(pipe redis.Pipeliner) {
		for i := range states {
			s := &states[i]
			if !whole(*s) || sizes[i] == nil {
				continue
			}
			if err := sizes[i].Err(); err != nil {
				continue // reported by checkSizes, once the trip is done
			}
			s.Size = sizes[i].Val()
			if s.Type != "string" && limit > 0 && s.Size <= maxPriorElements {
				mems[i] = redis.NewIntCmd(ctx, "memory", "usage", s.Key, "samples", "0")
				_ = pipe.Process(ctx, mems[i])
			}
		}
	}); err != nil {
		return nil, nil, err
	}
	// A server that rejects the SAMPLES option (the embedded demo) does not
	// sample: its plain MEMORY USAGE measures the whole value.
	if err := pipelined(ctx, p, conn, db, func(pipe redis.Pipeliner) {
		for i, m := range mems {
			if m != nil && isSyntaxErr(m.Err()) {
				mems[i] = redis.NewIntCmd(ctx, "memory", "usage", states[i].Key)
				_ = pipe.Process(ctx, mems[i])
			}
		}
	}); err != nil {
		return nil, nil, err
	}
	return sizes, mems, nil
}

// checkSizes refuses a whole key whose size cannot be read exactly, or
// whose value is too large for the audit record to hold (lim bytes; 0
// checks nothing).
func checkSizes(states []State, sizes, mems []*redis.IntCmd, lim int64) error {
	for i := range states {
		s := &states[i]
		if !whole(*s) || lim <= 0 {
			continue
		}
		if sizes[i] == nil || sizes[i].Err() != nil {
			why := "its type has no length command"
			if sizes[i] != nil {
				why = redisErr("reading the length", sizes[i].Err()).Error()
			}
			return invalidf("the size of %s (%s) cannot be read exactly (%s), so its value is not read and it cannot be acted on whole", quoteKey(s.Key), s.Type, why)
		}
		switch {
		case s.Type == "string":
			if s.Size > rawPerPrior*lim {
				return tooLarge(s.Key, s.Size, "long", int(lim))
			}
		case s.Size > maxPriorElements:
			return invalidf("key %s has %d %s, more than the %d an audit record may hold, so it could not be undone", quoteKey(s.Key), s.Size, s.Unit, maxPriorElements)
		default:
			switch n, err := mems[i].Result(); {
			case err == redis.Nil:
				// Expired between the trips: DUMP below finds it gone.
			case err != nil:
				return invalidf("the size of %s cannot be measured exactly (%s), so its value is not read and it cannot be acted on whole; grant MEMORY USAGE to act on whole %ss",
					quoteKey(s.Key), redisErr("MEMORY USAGE … SAMPLES 0", err), s.Type)
			case n > rawPerPrior*lim:
				return tooLarge(s.Key, n, "in memory", int(lim))
			}
		}
	}
	return nil
}

// readDumps reads each whole key's DUMP and a string's excerpt, unless the
// plan asks for a snapshot (undo reads a key the way the action it reverses
// recorded it). snapped marks the keys to read element-wise instead: a
// snapshot asked for, or a DUMP refused or not in Redis's format.
func readDumps(ctx context.Context, p pipeliner, conn *redisview.Conn, db int, plan Plan, states []State, lim int64) (snapped []bool, err error) {
	dumps := make([]*redis.StringCmd, len(states))
	excerpts := make([]*redis.StringCmd, len(states))
	probes := make([]*redis.Cmd, len(states))
	snapped = make([]bool, len(states))
	if err := pipelined(ctx, p, conn, db, func(pipe redis.Pipeliner) {
		for i, s := range states {
			if !whole(s) {
				continue
			}
			if method, _ := hintAt(plan, i); method == captureSnapshot {
				snapped[i] = true
			} else {
				dumps[i] = pipe.Dump(ctx, s.Key)
				probes[i] = restoreProbe(ctx, pipe, s.Key)
			}
			if s.Type == "string" && !s.Sensitive {
				excerpts[i] = pipe.GetRange(ctx, s.Key, 0, excerptBytes-1)
			}
		}
	}); err != nil {
		return nil, err
	}
	for i := range states {
		s := &states[i]
		if dumps[i] != nil {
			switch err := dumps[i].Err(); {
			case err == redis.Nil:
				// Expired between the round trips: under WATCH, EXEC
				// will fail; in a preview, the key is simply gone.
				*s = State{Key: s.Key, Type: "none", PTTL: -2, Size: -1, Family: s.Family, Role: s.Role, Sensitive: s.Sensitive}
			case err == nil && checkDump([]byte(dumps[i].Val())) && restorable(probes[i]):
				s.dump = []byte(dumps[i].Val())
			case err == nil, isUnsupported(err), isWrongType(err):
				// Refused (ACL, a managed service), or a payload that is not
				// Redis's format (the embedded demo): read it element-wise.
				snapped[i] = true
			default:
				return nil, redisErr("reading DUMP of "+quoteKey(s.Key)+" (needed to record the prior value)", err)
			}
		}
		if s.Exists() && excerpts[i] != nil && excerpts[i].Err() == nil {
			s.Excerpt = excerpts[i].Val()
			s.Truncated = s.Size > int64(len(s.Excerpt))
		}
		if lim > 0 && !s.Sensitive && int64(len(s.dump)) > lim {
			return nil, tooLarge(s.Key, int64(len(s.dump)), "serialized", int(lim))
		}
	}
	return snapped, nil
}

// restoreProbe asks whether this user may RESTORE the key, without writing:
// RESTORE without REPLACE of a key that exists answers BUSYKEY before
// anything else (an absent key: the negative TTL is refused first), while
// a user without the command gets NOPERM. A prior recorded by DUMP that
// RESTORE may not write back would make the action impossible to undo.
func restoreProbe(ctx context.Context, pipe redis.Pipeliner, key string) *redis.Cmd {
	return pipe.Do(ctx, "restore", key, "-1", "keydeck-probe")
}

func restorable(probe *redis.Cmd) bool {
	return probe == nil || !isUnsupported(probe.Err())
}

// readSnapshots reads, in one round trip, the value of every key marked,
// element-wise (see Snapshot). Their exact sizes were checked already.
func (r *Runner) readSnapshots(ctx context.Context, p pipeliner, conn *redisview.Conn, db int, states []State, marked []bool) error {
	reads := make([]redis.Cmder, len(states))
	for i, s := range states {
		if marked[i] && s.Exists() && !snapshotType(s.Type) {
			return invalidf("the value of %s (%s) can only be recorded with DUMP, which this server refuses, so it cannot be acted on whole", quoteKey(s.Key), s.Type)
		}
	}
	if err := pipelined(ctx, p, conn, db, func(pipe redis.Pipeliner) {
		for i, s := range states {
			if marked[i] && s.Exists() {
				reads[i] = snapshotRead(ctx, pipe, s.Type, s.Key)
			}
		}
	}); err != nil {
		return err
	}
	for i := range states {
		s := &states[i]
		if reads[i] == nil {
			continue
		}
		snap, err := snapshotOf(s.Type, reads[i])
		switch {
		case err == redis.Nil || (err == nil && snap.empty()):
			*s = State{Key: s.Key, Type: "none", PTTL: -2, Size: -1, Family: s.Family, Role: s.Role, Sensitive: s.Sensitive}
		case err != nil:
			return redisErr("reading the value of "+quoteKey(s.Key)+" (needed to record the prior value)", err)
		default:
			if lim := int64(r.opts.MaxPriorBytes); lim > 0 && !s.Sensitive && snap.bytes() > lim {
				return tooLarge(s.Key, snap.bytes(), "as elements", int(lim))
			}
			s.snap = snap
		}
	}
	return nil
}

// pipelined runs one round trip of reads; replies the server refused are
// left on their commands for the caller to judge.
func pipelined(ctx context.Context, p pipeliner, conn *redisview.Conn, db int, fn func(redis.Pipeliner)) error {
	cmds, err := p.Pipelined(ctx, func(pipe redis.Pipeliner) error { fn(pipe); return nil })
	if err := redisview.PipelineErr(cmds, err); err != nil {
		return redisErr(where(conn, db), err)
	}
	return nil
}

func where(conn *redisview.Conn, db int) string {
	return fmt.Sprintf("reading the keys (connection %q, database %d)", conn.Name, db)
}

func tooLarge(key string, n int64, how string, limit int) error {
	return invalidf("key %s is %s %s, more than the %s an audit record may hold, so it could not be undone; raise the audit prior limit to act on it",
		quoteKey(key), format.Bytes(n), how, format.Bytes(int64(limit)))
}

// quoteKey renders a key name in messages: quoted, so spaces and control
// characters in attacker-chosen names cannot disguise the message.
func quoteKey(k string) string {
	const max = 200
	if len(k) > max {
		return fmt.Sprintf("%q…", k[:max])
	}
	return fmt.Sprintf("%q", k)
}
