package bulk

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview/action"
)

// Run takes over the jobs whose owner died (their lease lapsed) until ctx
// ends: a running job goes on where it stopped, a count is marked failed
// (counted again by a new preview). Every Keydeck process runs it.
func (e *Engine) Run(ctx context.Context) {
	t := e.o.Clock.NewTicker(e.o.Lease / 2)
	defer t.Stop()
	for {
		e.TakeOver(ctx)
		select {
		case <-ctx.Done():
			return
		case <-e.ctx.Done():
			return
		case <-t.C():
		}
	}
}

// TakeOver looks once for active jobs nobody holds, and takes them.
func (e *Engine) TakeOver(ctx context.Context) {
	ids, err := e.o.Audit.SMembers(ctx, e.activeKey()).Result()
	if err != nil {
		e.o.Log.Warn("bulk: active jobs not read", "err", err)
		return
	}
	for _, id := range ids {
		e.mu.Lock()
		_, busy := e.mine[id]
		_, counting := e.mine["count:"+id]
		busy = busy || counting
		e.mu.Unlock()
		if busy {
			continue
		}
		ok, err := e.acquire(ctx, id)
		if err != nil || !ok {
			continue
		}
		j, err := e.Job(ctx, id)
		switch {
		case err != nil:
			e.release(ctx, id)
			if errors.Is(err, ErrNotFound) {
				_ = e.o.Audit.SRem(ctx, e.activeKey(), id).Err()
			}
		case j.Status == Counting:
			j.Status, j.Error, j.Updated = Failed, "the count was interrupted (Keydeck stopped); preview again", e.now().UTC()
			_ = e.save(ctx, j)
			e.release(ctx, id)
		case j.Status == Running:
			e.o.Log.Info("bulk: taking over a job whose owner stopped", "job", id, "owner", j.Owner)
			e.spawn(id, func(ctx context.Context) { e.run(ctx, id) })
		default:
			_ = e.save(ctx, j) // leaves the active set
			e.release(ctx, id)
		}
	}
}

// run executes a job this engine holds the lease of, batch by batch,
// until it is done, cancelled, failed, or the engine stops (the job then
// stays Running for a takeover).
func (e *Engine) run(ctx context.Context, id string) {
	e.holding(ctx, id, func(ctx context.Context) { e.runHeld(ctx, id) })
}

func (e *Engine) runHeld(ctx context.Context, id string) {
	// The lease is given up with the final state (finish), or when this
	// engine stops, for another to take the job over; never in a defer,
	// which could free a lease the same engine took again meanwhile.
	j, err := e.Job(ctx, id)
	if err != nil {
		e.o.Log.Warn("bulk: job not read", "job", id, "err", err)
		e.release(ctx, id)
		return
	}
	k, err := kindOf(j.Spec.Kind)
	if err == nil {
		j.Owner = e.o.Owner
		err = e.batches(ctx, &j, k)
	}
	switch {
	case errors.Is(err, errLeaseLost), errors.Is(context.Cause(ctx), errLeaseLost):
		e.o.Log.Info("bulk: the job's lease was lost; stopping, another engine runs it", "job", id)
		return
	case ctx.Err() != nil:
		e.release(ctx, id)
		return
	case errors.Is(err, errCancelled):
		j.Status = Cancelled
	case err != nil:
		j.Status, j.Error = Failed, err.Error()
	default:
		j.Status = Done
	}
	e.finish(context.WithoutCancel(ctx), j)
}

var errLeaseLost = errors.New("the job's lease was lost")

// finish records a stopped job's state and its outcome record, unless
// this engine no longer holds the job (another one finishes it).
func (e *Engine) finish(ctx context.Context, j Job) {
	if ok, err := e.renew(ctx, j.ID); err == nil && !ok {
		e.o.Log.Warn("bulk: the job's lease was lost; another engine finishes it", "job", j.ID)
		return
	}
	j.Updated, j.Owner = e.now().UTC(), ""
	rec := e.record(j, action.Actor{User: j.StartedBy, Level: action.Admin}, action.PhaseOutcome)
	rec.Level = j.Level
	rec.Ref, rec.Outcome, rec.Summary = j.Intent, action.OutcomeOK, summary(j)
	if j.Status == Cancelled {
		if by, err := e.o.Audit.HGet(ctx, e.jobKey(j.ID), "cancel").Result(); err == nil && by != "" {
			rec.Args["cancelled_by"] = by
		}
	}
	if j.Status != Done {
		rec.Outcome, rec.Error = action.OutcomeFailed, string(j.Status)
		if j.Error != "" {
			rec.Error += ": " + j.Error
		}
	}
	if id, err := e.o.Runner.Audit().Append(ctx, rec); err == nil {
		j.Outcome = id
	} else {
		e.o.Log.Warn("bulk: outcome not recorded", "job", j.ID, "err", err)
	}
	if err := e.saveAs(ctx, j, true); err != nil {
		e.o.Log.Warn("bulk: job state not saved", "job", j.ID, "err", err)
	}
}

// batches runs the job's remaining items.
func (e *Engine) batches(ctx context.Context, j *Job, k Kind) error {
	conn, err := e.o.Conns(j.Spec.Sel.Conn)
	if err != nil {
		return err
	}
	c := conn.DB(j.Spec.Sel.DB)
	budget := e.rate(j.Spec.Sel.Conn)
	for j.Next < j.Count {
		if err := e.turn(ctx, j.ID); err != nil {
			return err
		}
		items, err := e.loadItems(ctx, j.ID, j.Next, int64(e.o.Batch))
		if err != nil {
			return err
		}
		if len(items) == 0 {
			return errors.New("the job's items are missing from the audit Redis")
		}
		if err := budget.Take(ctx, j.StartedBy, int64(len(items))); err != nil { // per user: more jobs buy no more rate
			return err
		}
		res, err := e.batch(ctx, c, *j, k, items)
		if err != nil {
			return conn.WrapErr(err)
		}
		if err := e.settle(ctx, j, items, res); err != nil {
			return err
		}
	}
	return nil
}

// turn renews the lease and stops a cancelled job.
func (e *Engine) turn(ctx context.Context, id string) error {
	ok, err := e.renew(ctx, id)
	switch {
	case err != nil:
		return err
	case !ok:
		return errLeaseLost
	}
	stop, err := e.cancelRequested(ctx, id)
	if err != nil {
		return err
	}
	if stop {
		return errCancelled
	}
	return nil
}

// settle records a batch's result in one transaction on the audit Redis:
// the priors, the skips, the new position; the in-flight record goes.
func (e *Engine) settle(ctx context.Context, j *Job, items []Item, res result) error {
	j.Next += int64(len(items))
	j.Acted += int64(len(res.acted))
	for _, s := range res.skips {
		switch s.Reason {
		case ReasonChanged:
			j.Changed++
		case ReasonGone:
			j.Gone++
		default:
			j.Other++
		}
	}
	j.Updated = e.now().UTC()
	// Fenced: an engine that lost the job writes none of its results (nor
	// drops the in-flight record of the engine that holds it now).
	return e.fenced(ctx, j.ID, nil, func() (func(redis.Pipeliner), error) { return e.queueSettle(ctx, *j, res), nil })
}

// queueSettle queues a batch's records and the job's new state.
func (e *Engine) queueSettle(ctx context.Context, j Job, res result) func(redis.Pipeliner) {
	return func(p redis.Pipeliner) {
		if j.Undoable && len(res.acted) > 0 {
			enc := make([]any, len(res.acted))
			for i, a := range res.acted {
				enc[i] = encodePrior(a)
			}
			p.RPush(ctx, e.priors(j.ID), enc...)
		}
		if len(res.skips) > 0 {
			enc := make([]any, len(res.skips))
			for i, s := range res.skips {
				enc[i] = encodeSkip(s)
			}
			p.RPush(ctx, e.skipped(j.ID), enc...)
		}
		p.Del(ctx, e.inflight(j.ID))
		e.queueSave(ctx, p, j)
	}
}
