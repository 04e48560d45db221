package action

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview/bans"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/views/format"
)

// Undo restores the keys of an audited action to the state its intent
// record captured (RESTORE … REPLACE with the recorded remaining TTL, or
// DEL for a key that did not exist). It is an action like any other:
// previewed, confirmed, audited, and itself undoable.
//
// A key recorded by its member (Target.Member, see MemberPlan: a
// leaderboard entry) is restored by that member alone: ZADD of the
// recorded score if it was there, ZREM if it was not, and only while the
// member is exactly as the action left it (a member someone added again
// is refused); the rest of the sorted set, which may have moved on, is
// left alone.
//
// It refuses when the keys are no longer exactly as the action left them
// (restoring would silently discard someone's later change), when a prior
// value was not recorded (sensitive), when the record was already undone,
// or when a recorded value is damaged.
type Undo struct{}

func init() {
	Register(Undo{})
}

func (Undo) Name() string    { return KindUndo }
func (Undo) Title() string   { return "Undo" }
func (Undo) Requires() Level { return Admin }
func (Undo) Args() []Arg {
	return []Arg{{Name: ArgRecord, Help: "the id of the successful outcome record to undo"}}
}

// UndoRequest is the request to undo an outcome record.
func UndoRequest(rec Record) Request {
	req := Request{Conn: rec.Conn, DB: rec.DB, Args: map[string]string{ArgRecord: rec.ID}}
	if len(rec.Keys) > 0 {
		req.Key = rec.Keys[0]
	}
	return req
}

type undoer interface{ undoes() string }

type priorKey struct {
	key    string
	absent bool
	dump   string
	ttl    time.Duration // 0: no TTL
	shape  State         // as recorded, for the description
	after  string        // fingerprint the action left
	member *MemberState  // recorded by one member of a sorted set; absent is !member.Present
	snap   *Snapshot     // the prior value element-wise, where DUMP was refused
	expiry time.Time     // a part's key: when the key would have expired (zero: no TTL)
	// snapshotRead: the state the action left was read element-wise, so it
	// is read so again to compare.
	snapshotRead bool
}

type undoPlan struct {
	record  string
	keys    []string
	priors  []priorKey
	members map[string]MemberRef
	notes   []string // targets the action's kind leaves as they are (see partKeeper)
	// keep: undoing set-bloom-bits leaves the bits other members need.
	keep *keepBits
}

// keepBits are the bits an undo of set-bloom-bits would clear that other
// members of the ban set need: clearing one would silently un-ban them
// (the application's bloom check is fail-open). prepare finds them,
// reading the whole set (bans.Needed) with the set watched, so a member
// added before EXEC makes EXEC fail.
type keepBits struct {
	list   bans.List
	member string  // the member whose bits the action set
	clear  []int64 // the offsets undo would clear (clear before the action)
	by     []string
	read   bool
	kept   map[int64]string // offset → a member that needs it
}

func (p undoPlan) watched() []string {
	if p.keep == nil {
		return nil
	}
	return []string{p.keep.list.SetKey}
}

func (p undoPlan) prepare(ctx context.Context, c redis.Cmdable) error {
	k := p.keep
	if k == nil {
		return nil
	}
	by, _, err := bans.Needed(ctx, c, k.list, k.clear, k.member)
	switch {
	case errors.Is(err, bans.ErrSetChanged):
		return fmt.Errorf("%w: members of %s came or went while it was read (%v); nothing was written, preview again", ErrChanged, quoteKey(k.list.SetKey), err)
	case errors.Is(err, bans.ErrTooLarge):
		return notUndoablef("record %s: %v, so the bits other members of %s need cannot be told from those %s alone had; clearing them could silently un-ban someone, so nothing is undone", p.record, err, quoteKey(k.list.SetKey), quoteKey(k.member))
	case err != nil:
		return redisf("reading %s for the bits other members need: %v", quoteKey(k.list.SetKey), err)
	}
	k.by, k.read, k.kept = by, true, map[int64]string{}
	for i, m := range by {
		if m != "" {
			k.kept[k.clear[i]] = m
		}
	}
	return nil
}

// bits is what undo writes for m: the recorded bits, but 1 where another
// member needs the bit.
func (p undoPlan) bits(m *MemberState) string {
	if p.keep == nil || m.Kind != PartBits || len(p.keep.kept) == 0 {
		return m.Bits
	}
	b := []byte(m.Bits)
	for i, off := range m.Offsets {
		if _, ok := p.keep.kept[off]; ok {
			b[i] = '1'
		}
	}
	return string(b)
}

// keptText says which bits stay and why, or "".
func (p undoPlan) keptText(m *MemberState) string {
	if p.keep == nil || m.Kind != PartBits || len(p.keep.kept) == 0 {
		return ""
	}
	var offs []int64
	var who []string
	seen := map[string]bool{}
	for i, off := range m.Offsets {
		if y, ok := p.keep.kept[off]; ok && m.Bits[i] == '0' && !slices.Contains(offs, off) {
			offs = append(offs, off)
			if !seen[y] && len(who) < 3 {
				seen[y] = true
				who = append(who, quoteKey(y))
			}
		}
	}
	return fmt.Sprintf("; offsets %s stay set: other members of the ban set %s need them (%s), and clearing one would silently un-ban them (the application's bloom check is fail-open)",
		offsetsText(offs), quoteKey(p.keep.list.SetKey), strings.Join(who, ", "))
}

func (p undoPlan) Notes() []string               { return p.notes }
func (p undoPlan) undoes() string                { return p.record }
func (p undoPlan) Keys() []string                { return p.keys }
func (p undoPlan) Members() map[string]MemberRef { return p.members }

func (p undoPlan) captureHint(i int) (string, string) {
	pk := p.priors[i]
	switch {
	case pk.snap != nil:
		return captureSnapshot, pk.snap.Type
	case pk.snapshotRead:
		return captureSnapshot, ""
	}
	return "", ""
}
func (Undo) refuse(id, why string) error {
	return notUndoablef("record %s: %s", id, why)
}

func (u Undo) Plan(ctx context.Context, env Env, req Request) (Plan, error) {
	if err := checkArgs(req, ArgRecord); err != nil {
		return nil, err
	}
	id := req.Args[ArgRecord]
	if id == "" {
		return nil, invalidf("record is required")
	}
	rec, intent, err := u.records(ctx, env, req, id)
	if err != nil {
		return nil, err
	}
	if rec.Server != nil {
		return u.planServerUndo(env, id, rec, intent)
	}
	after, afterCapture := map[string]string{}, map[string]string{}
	for _, t := range rec.Targets {
		after[t.Key], afterCapture[t.Key] = t.After, t.Capture
	}
	p := undoPlan{record: id, members: map[string]MemberRef{}}
	for _, t := range intent.Targets {
		if why := keptOnUndo(rec.Action, t); why != "" {
			p.notes = append(p.notes, why)
			continue
		}
		pk := priorKey{key: t.Key, after: after[t.Key], absent: t.Type == "none",
			shape:        State{Key: t.Key, Type: t.Type, PTTL: t.PTTL, Size: t.Size, Unit: t.Unit},
			snapshotRead: afterCapture[t.Key] == captureSnapshot}
		if err := u.prior(&pk, t, intent.Time, env.Now, id); err != nil {
			return nil, err
		}
		if pk.member != nil {
			m := pk.member
			p.members[t.Key] = MemberRef{Kind: m.Kind, Name: m.Name, Bits: m.Offsets, Desc: descending(env, req.DB, t.Key)}
		}
		p.keys = append(p.keys, t.Key)
		p.priors = append(p.priors, pk)
	}
	if len(p.keys) == 0 {
		return nil, u.refuse(id, "it names no keys")
	}
	if rec.Action == KindSetBloomBits {
		if err := u.keepBloomBits(&p, env, req.DB, id); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// records reads the outcome record id and the intent record it concludes,
// refusing one that is not a successful outcome of this connection,
// database and key, or that is already undone.
func (u Undo) records(ctx context.Context, env Env, req Request, id string) (rec, intent Record, err error) {
	rec, err = env.Audit.Get(ctx, id)
	if err != nil {
		return Record{}, Record{}, err
	}
	switch {
	case rec.Phase != PhaseOutcome:
		return Record{}, Record{}, u.refuse(id, "is an intent record; undo the outcome record that concludes it")
	case rec.Outcome != OutcomeOK:
		return Record{}, Record{}, u.refuse(id, fmt.Sprintf("the action %s (%s), so there is nothing to undo", rec.Outcome, rec.Error))
	case rec.Own():
		return Record{}, Record{}, u.refuse(id, fmt.Sprintf("it records %s, a write to Keydeck's own records, which no undo restores", rec.Action))
	case rec.Conn != req.Conn || rec.DB != req.DB:
		return Record{}, Record{}, invalidf("record %s is about connection %q database %d, not %q database %d", id, rec.Conn, rec.DB, req.Conn, req.DB)
	case req.Key != "" && (len(rec.Keys) == 0 || rec.Keys[0] != req.Key):
		return Record{}, Record{}, invalidf("record %s is not about key %s", id, quoteKey(req.Key))
	}
	if by, err := env.Audit.claimOf(ctx, id); err != nil {
		return Record{}, Record{}, err
	} else if by != "" {
		return Record{}, Record{}, alreadyUndone(id, by)
	}
	intent, err = env.Audit.Get(ctx, rec.Ref)
	if err != nil || intent.Phase != PhaseIntent {
		return Record{}, Record{}, u.refuse(id, "its intent record, which holds the prior values, is gone (trimmed from the capped log?)")
	}
	return rec, intent, nil
}

// prior fills pk with what the intent recorded (at intentAt) of target t:
// its member, or its whole prior value and the time it had left; it
// refuses a value not recorded or damaged, and a key that would have
// expired by now.
func (u Undo) prior(pk *priorKey, t Target, intentAt, now time.Time, id string) error {
	switch {
	case t.Sensitive || t.Prior == PriorSensitive:
		return u.refuse(id, fmt.Sprintf("the value of %s is sensitive and was not recorded", quoteKey(t.Key)))
	case pk.after == "":
		return u.refuse(id, fmt.Sprintf("the state the action left %s in was not recorded", quoteKey(t.Key)))
	case t.Member != nil:
		m := *t.Member
		if why := damagedPart(m); why != "" {
			return u.refuse(id, fmt.Sprintf("the recorded %s %s of %s is damaged (%s)", partNoun(m.Kind), quoteKey(m.Name), quoteKey(t.Key), why))
		}
		pk.member, pk.absent = &m, !m.Present
		if t.PTTL >= 0 {
			// Only used if the key is gone when undo runs: the part then
			// comes back in a key with the time the key had left.
			expiry := intentAt.Add(time.Duration(t.PTTL) * time.Millisecond)
			pk.ttl, pk.expiry = expiry.Sub(now), expiry
		}
	case !pk.absent:
		if t.Snapshot != nil {
			if !t.Snapshot.valid() || t.Snapshot.Type != t.Type {
				return u.refuse(id, fmt.Sprintf("the recorded value of %s is damaged (a %s snapshot that cannot be written back)", quoteKey(t.Key), t.Snapshot.Type))
			}
			pk.snap = t.Snapshot
		} else {
			b, err := base64.StdEncoding.DecodeString(t.Prior)
			if err != nil || !checkDump(b) {
				return u.refuse(id, fmt.Sprintf("the recorded value of %s is damaged (bad encoding or checksum)", quoteKey(t.Key)))
			}
			pk.dump = string(b)
		}
		if t.PTTL >= 0 {
			// The key would have expired at intent time + PTTL: restore
			// only the time it had left, and refuse once that has passed
			// (an expired lock or ban brought back would be a new one).
			expiry := intentAt.Add(time.Duration(t.PTTL) * time.Millisecond)
			left := expiry.Sub(now)
			if left <= 0 {
				return u.refuse(id, fmt.Sprintf("%s would have expired at %s anyway; restoring it now would bring back state the application has moved past", quoteKey(t.Key), expiry.UTC().Format("2006-01-02 15:04:05 UTC")))
			}
			pk.ttl = max(left, time.Millisecond)
			pk.shape.PTTL = pk.ttl.Milliseconds()
		}
	}
	return nil
}

// keepBloomBits is, for the undo of set-bloom-bits, the bits of the bloom
// the undo may clear: those the member's own bits set, less the ones other
// members of its ban set need (read at confirmation, see keepBits).
func (u Undo) keepBloomBits(p *undoPlan, env Env, db int, id string) error {
	for _, pk := range p.priors {
		if pk.member == nil || pk.member.Kind != PartBits {
			continue
		}
		var l bans.List
		ok := env.Conn != nil
		if ok {
			l, ok = bans.ForKey(env.Conn.Pack(), db, pk.key)
		}
		if !ok || l.BloomKey != pk.key {
			return u.refuse(id, fmt.Sprintf("%s is no longer the bloom of a ban list in the pack, so the bits other members of its set need cannot be told", quoteKey(pk.key)))
		}
		k := &keepBits{list: l, member: pk.member.Name}
		for i, off := range pk.member.Offsets {
			if pk.member.Bits[i] == '0' {
				k.clear = append(k.clear, off)
			}
		}
		p.keep = k
	}
	return nil
}

func (p undoPlan) Describe(states []State) ([]Change, error) {
	var serverRDB uint16
	for _, s := range states {
		serverRDB = max(serverRDB, dumpVersion(s.dump))
	}
	out := make([]Change, len(states))
	for i, s := range states {
		pk := p.priors[i]
		if pk.member != nil {
			c, err := p.describeMember(pk, s)
			if err != nil {
				return nil, err
			}
			out[i] = c
			continue
		}
		if !s.matches(pk.after) {
			return nil, notUndoablef("record %s: %s changed since the action (now %s); undoing would discard that later change", p.record, quoteKey(s.Key), s.Shape())
		}
		if pk.absent {
			out[i] = Change{Key: s.Key, Op: "delete", After: "absent", Before: s,
				Text: fmt.Sprintf("DELETE %s, which did not exist before the action (now %s)", quoteKey(s.Key), s.Shape())}
			continue
		}
		if v := dumpVersion([]byte(pk.dump)); pk.snap == nil && serverRDB > 0 && v > serverRDB {
			return nil, notUndoablef("record %s: the value of %s was saved by a newer Redis (RDB %d) than this server (RDB %d)", p.record, quoteKey(s.Key), v, serverRDB)
		}
		restored := pk.shape
		restored.PTTL = -1
		if pk.ttl > 0 {
			restored.PTTL = pk.ttl.Milliseconds()
		}
		out[i] = Change{Key: s.Key, Op: "restore", After: restored.Shape(), Before: s,
			Text: fmt.Sprintf("RESTORE %s as it was before the action (%s; now %s)", quoteKey(s.Key), restored.Shape(), s.Shape())}
	}
	return out, nil
}

// describeMember says how a part is put back: only the part, only if it
// is as the action left it.
func (p undoPlan) describeMember(pk priorKey, s State) (Change, error) {
	m := pk.member
	noun, name, key := partNoun(m.Kind), quoteKey(m.Name), quoteKey(s.Key)
	if !s.matches(pk.after) {
		if pk.after == fpAbsent && s.Member != nil && s.Member.Present {
			return Change{}, notUndoablef("record %s: %s %s of %s was added again since the action (now %s), by the application or someone else; restoring the recorded entry would overwrite it",
				p.record, noun, name, key, memberShape(s.Member))
		}
		return Change{}, notUndoablef("record %s: %s changed since the action; undoing would discard that later change", p.record, changedText(s))
	}
	if !s.Exists() && !pk.expiry.IsZero() && pk.ttl <= 0 {
		return Change{}, notUndoablef("record %s: %s would have expired at %s anyway; restoring %s %s now would bring back state the application has moved past",
			p.record, key, pk.expiry.UTC().Format("2006-01-02 15:04:05 UTC"), noun, name)
	}
	ttl := ""
	if !s.Exists() && pk.ttl > 0 {
		ttl = ", TTL " + format.Duration(pk.ttl.Round(time.Second))
	}
	switch {
	case m.Kind == PartBits:
		bits := p.bits(m)
		if p.keep != nil && p.keep.read && strings.Trim(bits, "1") == "" && m.Bits != bits {
			return Change{}, notUndoablef("record %s: every bit of %s it set is now needed by other members of %s (%s); clearing them would silently un-ban those, and there is nothing else to undo",
				p.record, name, quoteKey(p.keep.list.SetKey), strings.TrimPrefix(p.keptText(m), "; "))
		}
		return Change{Key: s.Key, Op: "set-bits", After: "bits " + bits, Before: s,
			Text: fmt.Sprintf("SET BITS %s of %s back to %s, as before the action (now %s; %s%s)%s", name, key, bits, memberShape(s.Member), s.Shape(), ttl, p.keptText(m))}, nil
	case pk.absent:
		return Change{Key: s.Key, Op: "remove-member", After: noun + " " + name + " absent", Before: s,
			Text: fmt.Sprintf("REMOVE %s %s from %s, which it was not in before the action (now %s; %s)", noun, name, key, memberShape(s.Member), s.Shape())}, nil
	}
	what := ""
	switch m.Kind {
	case PartZMember:
		what = " with score " + m.Score
	case PartHField:
		what = fmt.Sprintf(" with its value (%d bytes)", len(m.Value))
	}
	return Change{Key: s.Key, Op: "add-member", After: noun + " " + name + " back" + what, Before: s,
		Text: fmt.Sprintf("ADD %s %s back to %s%s, as before the action (now absent; %s%s)", noun, name, key, what, s.Shape(), ttl)}, nil
}

// descending reports whether the sorted set key ranks from the highest
// score, as its pack says (a leaderboard of order asc does not); true
// when the pack does not say.
func descending(env Env, db int, key string) bool {
	if env.Conn == nil || env.Conn.Classifier() == nil {
		return true
	}
	if f, ok := env.Conn.Classifier().Classify(db, key); ok {
		if lp, ok := f.Params.(*schema.LeaderboardParams); ok {
			return lp.Order != "asc"
		}
	}
	return true
}

func (p undoPlan) Apply(ctx context.Context, tx redis.Pipeliner, states []State) {
	for i, pk := range p.priors {
		if pk.member != nil {
			m := *pk.member
			m.Bits = p.bits(pk.member)
			restorePart(ctx, tx, pk.key, &m)
			if states[i].Type == "none" && pk.ttl > 0 {
				tx.PExpire(ctx, pk.key, pk.ttl)
			}
			continue
		}
		switch {
		case pk.absent:
			tx.Del(ctx, pk.key)
		case pk.snap != nil:
			pk.snap.restore(ctx, tx, pk.key, pk.ttl)
		default:
			tx.RestoreReplace(ctx, pk.key, pk.ttl, pk.dump)
		}
	}
}
