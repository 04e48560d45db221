package bulk

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview"
)

// result is what one batch did.
type result struct {
	acted []Prior // the keys acted on (Prior filled when the job records priors)
	skips []Skip
}

func (r *result) add(o result) {
	r.acted = append(r.acted, o.acted...)
	r.skips = append(r.skips, o.skips...)
}

// maxAttempts is how often a batch is read again when a watched key was
// written between its read and its EXEC, before it goes key by key.
const maxAttempts = 3

// batch acts on items: on a cluster, one transaction per hash slot (a
// WATCH and a MULTI reach one node); elsewhere one for the batch.
func (e *Engine) batch(ctx context.Context, c redis.UniversalClient, j Job, k Kind, items []Item) (result, error) {
	inflight, err := e.o.Audit.HGetAll(ctx, e.inflight(j.ID)).Result()
	if err != nil {
		return result{}, auditErr(err)
	}
	var res result
	for _, g := range slotGroups(c, items) {
		r, err := e.group(ctx, c, j, k, g, inflight)
		if err != nil {
			return result{}, err
		}
		res.add(r)
	}
	return res, nil
}

func slotGroups(c redis.UniversalClient, items []Item) [][]Item {
	if _, ok := c.(*redis.ClusterClient); !ok {
		return [][]Item{items}
	}
	at := map[int]int{}
	var out [][]Item
	for _, it := range items {
		s := redisview.KeySlot(it.Key)
		i, ok := at[s]
		if !ok {
			i = len(out)
			at[s] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], it)
	}
	return out
}

// group runs one transaction over items (one slot), read again while a
// watched key is written under it; after maxAttempts, key by key, and a
// key that keeps changing under its own WATCH is skipped as changed.
func (e *Engine) group(ctx context.Context, c redis.UniversalClient, j Job, k Kind, items []Item, inflight map[string]string) (result, error) {
	keys := make([]string, len(items))
	for i, it := range items {
		keys[i] = it.Key
	}
	for range maxAttempts {
		var res result
		err := c.Watch(ctx, func(tx *redis.Tx) error {
			var err error
			res, err = e.attempt(ctx, tx, j, k, items, keys, inflight)
			return err
		}, keys...)
		if !errors.Is(err, redis.TxFailedErr) {
			return res, err
		}
		// Nothing was written: the in-flight record of this attempt is void.
		err = e.fenced(ctx, j.ID, nil, func() (func(redis.Pipeliner), error) {
			return func(p redis.Pipeliner) { p.HDel(ctx, e.inflight(j.ID), keys...) }, nil
		})
		if err != nil {
			return result{}, err
		}
	}
	if len(items) == 1 {
		return result{skips: []Skip{{Key: items[0].Key, Reason: ReasonChanged}}}, nil
	}
	var res result
	for i := range items {
		r, err := e.group(ctx, c, j, k, items[i:i+1], inflight)
		if err != nil {
			return result{}, err
		}
		res.add(r)
	}
	return res, nil
}

// skipReason says why a key not in its expected state is skipped.
func skipReason(want, got string) string {
	switch {
	case want == Absent:
		return ReasonExists
	case got == Absent:
		return ReasonGone
	}
	return ReasonChanged
}

// attempt reads the watched keys, records the batch in flight, and
// writes, in MULTI, the keys still in their counted state.
func (e *Engine) attempt(ctx context.Context, tx *redis.Tx, j Job, k Kind, items []Item, keys []string, inflight map[string]string) (result, error) {
	states, err := e.readStates(ctx, tx, keys)
	if err != nil {
		return result{}, err
	}
	// Redis's clock, not Keydeck's: an expiry set (or checked) from it is
	// the one Redis applies, whatever the skew between the two.
	now, err := tx.Time(ctx).Result()
	if err != nil {
		return result{}, err
	}
	var res result
	var act []int
	for i, it := range items {
		got := e.p.print(states[i])
		rec, wasInFlight := inflight[it.Key]
		switch {
		case got == it.Print || got == Absent && actsOnGone(k, it, e.now()):
			act = append(act, i)
		case wasInFlight:
			res.add(e.recovered(it, got, rec))
		default:
			res.skips = append(res.skips, Skip{Key: it.Key, Reason: skipReason(it.Print, got)})
		}
	}
	if len(act) == 0 {
		return res, nil
	}
	if err := e.markInFlight(ctx, j, k, items, states, act, now); err != nil {
		return result{}, err
	}
	type queued struct {
		i        int
		from, to int // the kind's commands
		after    stateCmds
	}
	var qs []queued
	cmds, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
		for _, i := range act {
			from := p.Len()
			if why := k.Queue(ctx, p, j, items[i], states[i], now); why != "" {
				res.skips = append(res.skips, Skip{Key: items[i].Key, Reason: why})
				continue
			}
			q := queued{i: i, from: from, to: p.Len()}
			if j.Undoable {
				q.after = queueAfter(ctx, p, k, items[i].Key)
			}
			qs = append(qs, q)
		}
		return nil
	})
	if errors.Is(err, redis.TxFailedErr) {
		return result{}, err
	}
	if err != nil && !errors.Is(err, redis.Nil) && !isReplyErr(cmds) {
		return result{}, err
	}
	for _, q := range qs {
		if why := refused(cmds[q.from:q.to]); why != "" {
			res.skips = append(res.skips, Skip{Key: items[q.i].Key, Reason: why})
			continue
		}
		p := Prior{Key: items[q.i].Key}
		if j.Undoable {
			after, err := q.after.stateAfter(states[q.i])
			if err != nil {
				return result{}, err
			}
			p.Prior, p.After, p.AfterAt = states[q.i], e.p.print(after), after.ExpireAt
		}
		res.acted = append(res.acted, p)
	}
	return res, nil
}

// markInFlight records, before EXEC, the keys about to be written, their
// prior state and the fingerprint of the state the write will leave them
// in, so that a restart tells a key the batch wrote from one the
// application wrote since. Fenced: only the lease's holder writes.
func (e *Engine) markInFlight(ctx context.Context, j Job, k Kind, items []Item, states []State, act []int, now time.Time) error {
	fields := make([]any, 0, 2*len(act))
	for _, i := range act {
		var rec inFlight
		if j.Undoable {
			rec.prior = states[i]
		}
		if x, ok := k.(Expecter); ok {
			if after, ok := x.Expect(j, items[i], states[i], now); ok {
				rec.after = e.p.print(after)
			}
		}
		fields = append(fields, items[i].Key, encodeInFlight(rec))
	}
	return e.fenced(ctx, j.ID, nil, func() (func(redis.Pipeliner), error) {
		return func(p redis.Pipeliner) { p.HSet(ctx, e.inflight(j.ID), fields...) }, nil
	})
}

// isReplyErr reports an EXEC that ran whose commands include one Redis
// refused (the others ran: a transaction is not rolled back).
func isReplyErr(cmds []redis.Cmder) bool {
	for _, c := range cmds {
		if err := c.Err(); err != nil && !errors.Is(err, redis.Nil) {
			var re redis.Error
			if !errors.As(err, &re) {
				return false
			}
		}
	}
	return len(cmds) > 0
}

// refused is the reason a kind's commands were refused ("" if not).
func refused(cmds []redis.Cmder) string {
	for _, c := range cmds {
		if err := c.Err(); err != nil && !errors.Is(err, redis.Nil) {
			return "refused by Redis: " + err.Error()
		}
	}
	return ""
}
