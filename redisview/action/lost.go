package action

import (
	"context"
	"errors"
	"fmt"
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
)

// settleLost tells what a transaction whose connection was lost did, on a
// sentinel's or a cluster's connection, from the keys' state on the
// server that answers now (the promoted replica after a failover), read
// within lostWait:
//
//   - every key as previewed: nothing was changed; the confirmation is
//     released, so it may be confirmed again, and the error says so;
//   - every key as the change leaves it (a key left alone unchanged, a
//     deleted key absent, any other key changed): the change was made,
//     once; the states are its post-state, and the action succeeded;
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
		switch op {
		case "none":
			if !unchanged {
				other = append(other, quoteKey(x.w.key(s.Key)))
			}
		case "delete":
			if s.Exists() {
				other = append(other, quoteKey(x.w.key(s.Key)))
			}
		default:
			if unchanged {
				other = append(other, quoteKey(x.w.key(s.Key)))
			}
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
