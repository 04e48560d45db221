package action

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/redis/go-redis/v9"
)

// commit runs the plan's writes in MULTI/EXEC on the connection that
// WATCHes the keys, followed, inside the same transaction, by the reads
// that fingerprint the state it leaves: no other client can slip a write
// between the change and the fingerprint that undo will later compare.
//
// Why WATCH + MULTI rather than one Lua script: it needs no EVAL (managed
// and least-privilege ACL users often lack it), DUMP and RESTORE cannot
// be called from scripts on every server, and the optimistic check gives
// the same guarantee here — EXEC applies every queued write or, if any
// watched key was touched since the reads, none.
//
// A member-level key (members, see MemberPlan) is read back by its member
// only. When EXEC fails because a watched key was touched, the error is
// errRaced, which Execute may retry for a MemberPlan.
func (r *Runner) commit(ctx context.Context, tx *redis.Tx, p Plan, states []State, members []*MemberRef) ([]State, error) {
	posts := make([]postRead, len(states))
	snapshotting := slices.ContainsFunc(states, func(s State) bool { return s.snap != nil })
	nApply := 0
	cmds, err := tx.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
		p.Apply(ctx, pipe, states)
		nApply = pipe.Len()
		for i, s := range states {
			posts[i] = queuePostRead(ctx, pipe, p, i, s, memberAt(members, i), snapshotting)
		}
		return nil
	})
	if err := execErr(cmds, nApply, err); err != nil {
		return nil, err
	}
	post := make([]State, len(states))
	for i, s := range states {
		post[i] = r.postState(s, posts[i], memberAt(members, i))
	}
	return post, nil
}

// postRead is what the transaction reads back of one key after the
// writes, to fingerprint the state it leaves.
type postRead struct {
	typ       *redis.StatusCmd
	pttl, exp *redis.IntCmd
	dump      *redis.StringCmd
	snap      redis.Cmder // read back element-wise (see Snapshot)
	snapType  string
	member    memberReads
}

// queuePostRead queues the reads of key i (state s; m: the member it
// names, if any) after the plan's writes.
func queuePostRead(ctx context.Context, pipe redis.Pipeliner, p Plan, i int, s State, m *MemberRef, snapshotting bool) postRead {
	var pr postRead
	pr.typ = pipe.Type(ctx, s.Key)
	pr.pttl = redis.NewIntCmd(ctx, "pttl", s.Key)
	_ = pipe.Process(ctx, pr.pttl)
	if s.Sensitive {
		// Type and TTL only: the value is never read back, and its
		// fingerprint would never be recorded.
		return pr
	}
	if m != nil {
		pr.member = queueMemberReads(ctx, pipe, s.Key, m, false, true)
		return pr
	}
	if s.expireAt != -1 { // an unknown command would abort the whole transaction
		pr.exp = redis.NewIntCmd(ctx, "pexpiretime", s.Key)
		_ = pipe.Process(ctx, pr.exp)
	}
	// Read back the way the prior was read: a DUMP queued where the
	// server refuses it would abort the whole transaction.
	method, typ := hintAt(p, i)
	if typ == "" {
		typ = s.Type
	}
	switch {
	case method == captureSnapshot || s.snap != nil:
		if snapshotType(typ) {
			pr.snap, pr.snapType = snapshotRead(ctx, pipe, typ, s.Key), typ
		}
	case method == captureDump || s.dump != nil || !snapshotting:
		pr.dump = pipe.Dump(ctx, s.Key)
	}
	return pr
}

// execErr is what EXEC's outcome means for the change: nil when every
// one of the first nApply commands (the writes) applied.
func execErr(cmds []redis.Cmder, nApply int, err error) error {
	switch {
	case err == nil:
	case errors.Is(err, redis.TxFailedErr):
		return errRaced
	case strings.HasPrefix(err.Error(), "EXECABORT"):
		// Refused while queuing (ACL, unknown command): EXEC discarded it all.
		return redisErr("queuing the change (nothing was changed)", firstErr(cmds, err))
	case !isServerReply(err):
		// EXEC may have run, or not: Execute reads the keys again to tell.
		return lostErr{err}
	}
	// EXEC ran. A command Redis refuses at run time does not roll back the
	// others, so say exactly how much happened.
	failed, first := 0, error(nil)
	for _, c := range cmds[:nApply] {
		if e := c.Err(); e != nil && e != redis.Nil {
			failed++
			if first == nil {
				first = e
			}
		}
	}
	switch {
	case failed == nApply && failed > 0:
		return redisErr("applying the change (nothing was changed)", first)
	case failed > 0:
		return redisErr(fmt.Sprintf("applying the change: %d of %d commands were refused and the others applied", failed, nApply), first)
	}
	return nil
}

// postState is the state key s was left in, as pr read it back, and
// fingerprinted; one not fingerprinted (a read failed) makes undo refuse
// rather than guess.
func (r *Runner) postState(s State, pr postRead, m *MemberRef) State {
	ps := State{Key: s.Key, Type: "none", PTTL: -2, Size: -1, Family: s.Family, Role: s.Role, Sensitive: s.Sensitive}
	if s.Sensitive {
		if pr.typ.Err() == nil && pr.pttl.Err() == nil {
			ps.Type, ps.PTTL = pr.typ.Val(), pr.pttl.Val()
			if !ps.Exists() {
				ps.PTTL = -2
			}
		}
		return ps
	}
	if m != nil {
		if pr.typ == nil || pr.typ.Err() != nil || pr.pttl.Err() != nil {
			return ps
		}
		ps.Type, ps.PTTL = pr.typ.Val(), pr.pttl.Val()
		if !ps.Exists() {
			ps.PTTL = -2
		}
		if pr.member.fill(&ps, m) != nil {
			ps.Member = nil
			return ps
		}
		r.fingerprints(&ps)
		return ps
	}
	if pr.typ == nil || pr.typ.Err() != nil || pr.pttl.Err() != nil || (pr.exp != nil && pr.exp.Err() != nil) {
		return ps
	}
	ps.Type, ps.PTTL = pr.typ.Val(), pr.pttl.Val()
	ps.expireAt = -1
	if pr.exp != nil {
		ps.expireAt = max(pr.exp.Val(), 0)
	}
	if !ps.Exists() {
		ps.PTTL = -2
		r.fingerprints(&ps)
		return ps
	}
	switch {
	case pr.dump != nil && pr.dump.Err() == nil:
		ps.dump = []byte(pr.dump.Val())
	case pr.snap != nil && pr.snapType == ps.Type:
		snap, err := snapshotOf(ps.Type, pr.snap)
		if err != nil {
			return ps
		}
		ps.snap = snap
	default:
		return ps // not read back
	}
	r.fingerprints(&ps)
	return ps
}

// errRaced: EXEC found a watched key touched since the reads and applied
// nothing.
var errRaced = fmt.Errorf("%w: a key was written by someone else while the change was being committed; nothing was changed, preview again", ErrChanged)

func firstErr(cmds []redis.Cmder, fallback error) error {
	for _, c := range cmds {
		if e := c.Err(); e != nil && e != redis.Nil {
			return e
		}
	}
	return fallback
}
