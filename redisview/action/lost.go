package action

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/views/format"
)

// lostErr: the connection failed while a transaction's EXEC was on its
// way or its reply was (a primary killed mid-action, a failover). Redis
// applies a transaction whole or not at all, and a replica promoted since
// has it whole or not at all; which one is told by reading the keys
// again (settleLost).
type lostErr struct{ err error }

func (e lostErr) Error() string {
	return fmt.Sprintf("connection to Redis lost while committing: %v", e.err)
}
func (e lostErr) Unwrap() error { return ErrRedis }

const (
	// lostWait bounds how long Execute waits for a sentinel's or a
	// cluster's replica to be promoted and answer after a lost EXEC. A
	// single server is not read again: there is no replica to wait for,
	// and dialing a server that is down leaves the client's pool refusing
	// to dial for up to a second after it is back (go-redis counts dial
	// failures until a background dial succeeds).
	lostWait = 30 * time.Second
	// lostPoll is the pause between its reads.
	lostPoll = 500 * time.Millisecond
	// lostSlack allows for clocks and rounding when a TTL read again is
	// compared with the one an EXEC sent elapsed ago would have left.
	lostSlack = time.Second
)

// settleLost tells what a transaction whose connection was lost did, on a
// sentinel's or a cluster's connection, from the keys' state on the
// server that answers now (the promoted replica after a failover), read
// within lostWait:
//
//   - every key as previewed: nothing was changed; the confirmation is
//     released, so it may be confirmed again, and the error says so;
//   - every key as the change leaves it (a key left alone unchanged, and
//     each other key as its op leaves it, see leftByChange; merely
//     different is not enough): the change was made, once; the states are
//     its post-state, and the action succeeded;
//   - anything else (someone else wrote meanwhile) or no answer: the
//     error says it is not known, naming the keys.
func (r *Runner) settleLost(ctx context.Context, x *execution, lost lostErr) ([]State, error) {
	if k := x.conn.Topology().Kind; k != redisview.Cluster && k != redisview.Sentinel {
		return nil, redisf("%v (Redis applies a transaction entirely or not at all: check the keys to see whether it happened)", lost)
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), lostWait)
	defer cancel()
	for {
		states, err := r.readStates(ctx, x.conn.DB(x.db), x.conn, x.db, x.p, x.keys)
		if err == nil {
			return r.lostVerdict(ctx, x, lost, states)
		}
		if !errors.Is(err, ErrRedis) {
			return nil, redisf("%v; reading the keys again to tell whether the change was made: %v. Redis applies a transaction entirely or not at all: check the keys", lost, err)
		}
		reloadSlots(ctx, x.conn, x.db) // a cluster's map, to the promoted replica
		t := time.NewTimer(lostPoll)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, redisf("%v, and Redis did not answer again within %s: whether the change was made is not known (Redis applies a transaction entirely or not at all): check the keys", lost, format.Duration(lostWait))
		case <-t.C:
		}
	}
}

func (r *Runner) lostVerdict(ctx context.Context, x *execution, lost lostErr, states []State) ([]State, error) {
	elapsed := time.Since(x.sentAt)
	var same, other []string
	for i, s := range states {
		unchanged := s.fp == x.pv.Fingerprints[i]
		if unchanged {
			same = append(same, quoteKey(x.w.key(s.Key)))
		}
		op := ""
		if i < len(x.out.Changes) {
			op = x.out.Changes[i].Op
		}
		if op == "none" && unchanged {
			continue
		}
		// A key changed otherwise than by this change (the application
		// wrote it during the failover) is not taken for the change made.
		if op == "none" || !r.leftByChange(ctx, x, i, op, s, elapsed) {
			other = append(other, quoteKey(x.w.key(s.Key)))
		}
	}
	switch {
	case len(same) == len(states):
		r.audit.releaseConfirmation(ctx, x.pv.Nonce)
		return nil, redisf("%v; read again on the server that answers now, every key is as previewed: nothing was changed. Confirm again to retry", lost)
	case len(other) == 0:
		x.conn.Log().Warn("action: the connection was lost at EXEC; the keys read again show the change made", "action", x.pv.Kind, "intent", x.out.IntentID, "err", lost.err)
		return states, nil
	}
	return nil, redisf("%v; read again, the keys are neither as previewed nor as the change leaves them (%s): someone else wrote them meanwhile, so whether the change was made is not known: check the keys", lost, strings.Join(other, ", "))
}

// leftByChange reports whether key i, read again as s after a lost EXEC
// (sent elapsed ago), is exactly as op of the plan leaves it: a mere
// difference from the preview is not enough, the key being live (the
// application may have written it meanwhile). An op whose result cannot be
// checked exactly is not taken as made.
func (r *Runner) leftByChange(ctx context.Context, x *execution, i int, op string, s State, elapsed time.Duration) bool {
	m := s.Member
	switch op {
	case "delete":
		return !s.Exists()
	case "remove-member":
		return m != nil && !m.Present
	case "persist":
		return s.Exists() && s.PTTL == -1
	case "expire":
		p, ok := x.p.(ttlPlan)
		want := p.ttl.Milliseconds()
		return ok && !p.persist && s.Exists() && s.PTTL >= 0 && s.PTTL <= want && s.PTTL >= want-elapsed.Milliseconds()-lostSlack.Milliseconds()
	case "add-member":
		if m == nil || !m.Present {
			return false
		}
		switch p := x.p.(type) {
		case banPlan:
			return m.Kind == PartSMember // a set's member: present is all there is
		case undoPlan:
			w := p.priors[i].member
			return w != nil && w.Present && m.Kind == w.Kind && m.Score == w.Score && m.Value == w.Value
		}
	case "set-bits":
		if m == nil || m.Kind != PartBits {
			return false
		}
		switch p := x.p.(type) {
		case banPlan, setBitsPlan:
			return m.Bits != "" && strings.Trim(m.Bits, "1") == ""
		case undoPlan:
			w := p.priors[i].member
			return w != nil && slices.Equal(m.Offsets, w.Offsets) && m.Bits == p.bits(w)
		}
	case "replace":
		p, ok := x.p.(*rebuildPlan)
		if !ok || s.Type != "string" || s.Size != int64(len(p.built.Bitmap)) || (s.PTTL >= 0) != (x.out.Changes[i].Before.PTTL >= 0) {
			return false
		}
		// The bitmap's size is the pack's, read already in memory.
		v, err := x.conn.DB(x.db).Get(ctx, s.Key).Bytes()
		return err == nil && bytes.Equal(v, p.built.Bitmap)
	case "restore":
		p, ok := x.p.(undoPlan)
		if !ok || !s.Exists() {
			return false
		}
		pk := p.priors[i]
		if pk.absent || pk.member != nil || s.Type != pk.shape.Type {
			return false
		}
		if pk.ttl > 0 {
			if s.PTTL < 0 || s.PTTL > pk.ttl.Milliseconds() {
				return false
			}
		} else if s.PTTL != -1 {
			return false
		}
		if pk.snap != nil {
			return s.snap != nil && bytes.Equal(s.snap.digest(), pk.snap.digest())
		}
		return s.dump != nil && bytes.Equal(contentDigest(s.dump), contentDigest([]byte(pk.dump)))
	}
	return false
}
