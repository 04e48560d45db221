package bulk

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview/action"
)

// A lease names the engine running a job; it lapses unless renewed, so a
// job whose Keydeck died is taken over.

var renewScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0`)

var releaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0`)

// acquire takes the job's lease if nobody holds it.
func (e *Engine) acquire(ctx context.Context, id string) (bool, error) {
	ok, err := e.o.Audit.SetNX(ctx, e.lease(id), e.o.Owner, e.o.Lease).Result()
	if err != nil {
		return false, auditErr(err)
	}
	return ok, nil
}

// renew extends the lease this engine holds; false: it was lost (it
// lapsed and another engine took the job).
func (e *Engine) renew(ctx context.Context, id string) (bool, error) {
	n, err := renewScript.Run(ctx, e.o.Audit, []string{e.lease(id)}, e.o.Owner, e.o.Lease.Milliseconds()).Int()
	if err != nil {
		return false, auditErr(err)
	}
	return n == 1, nil
}

// release gives the lease up (best effort: it lapses anyway).
func (e *Engine) release(ctx context.Context, id string) {
	_ = releaseScript.Run(context.WithoutCancel(ctx), e.o.Audit, []string{e.lease(id)}, e.o.Owner).Err()
}

// hold renews id's lease every Lease/3 while ctx lives, so a batch
// waiting on the rate budget or a slow Redis keeps it; when the lease is
// found lost (another engine took the job over) it cancels the work
// with errLeaseLost as the cause.
func (e *Engine) hold(ctx context.Context, id string, cancel context.CancelCauseFunc) {
	t := e.o.Clock.NewTicker(e.o.Lease / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
		// An error (the audit Redis unreachable) is tried again; the
		// fenced writes refuse anyway once the lease is gone.
		if ok, err := e.renew(ctx, id); err == nil && !ok {
			cancel(errLeaseLost)
			return
		}
	}
}

// fencedAttempts bounds how often a fenced write is tried again when a
// watched key moved under it (this engine's own renewal touches the
// lease key).
const fencedAttempts = 10

// fenced writes, in one MULTI on the audit Redis, what prepare returns,
// only while this engine holds job id's lease: the lease key (and keys)
// are WATCHed and the lease read under the WATCH; errLeaseLost when
// another engine holds it. prepare may read under the WATCH and refuse.
func (e *Engine) fenced(ctx context.Context, id string, keys []string, prepare func() (func(redis.Pipeliner), error)) error {
	watched := append([]string{e.lease(id)}, keys...)
	for range fencedAttempts {
		err := e.o.Audit.Watch(ctx, func(tx *redis.Tx) error {
			owner, err := tx.Get(ctx, e.lease(id)).Result()
			if err != nil && !errors.Is(err, redis.Nil) {
				return auditErr(err)
			}
			if owner != e.o.Owner {
				return errLeaseLost
			}
			write, err := prepare()
			if err != nil {
				return err
			}
			_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error { write(p); return nil })
			return err
		}, watched...)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, redis.TxFailedErr):
			continue
		case errors.Is(err, errLeaseLost), errors.Is(err, ErrState), errors.Is(err, ErrInvalid),
			errors.Is(err, errAudit), errors.Is(err, action.ErrNotFound):
			return err
		}
		return auditErr(err)
	}
	return statef("the job kept changing under this request; try again")
}

// saveHeld writes j's state, and with release gives up its lease in the
// same transaction, only while this engine holds the lease: an engine
// that lost it (a count or a run another engine took over) writes
// nothing and frees nobody else's lease.
func (e *Engine) saveHeld(ctx context.Context, j Job, release bool) error {
	return e.fenced(ctx, j.ID, nil, func() (func(redis.Pipeliner), error) {
		return func(p redis.Pipeliner) {
			e.queueSave(ctx, p, j)
			if release {
				p.Del(ctx, e.lease(j.ID))
			}
		}, nil
	})
}

// transition changes job id's state as a compare-and-set, with this
// engine holding its lease: change sees the state read under WATCH of the
// job key and refuses (ErrState) a state it does not start from; the
// state is written only if neither the job nor the lease moved meanwhile.
// also queues more writes in the same MULTI.
func (e *Engine) transition(ctx context.Context, id string, change func(j *Job) error, also func(p redis.Pipeliner)) (Job, error) {
	var out Job
	err := e.fenced(ctx, id, []string{e.jobKey(id)}, func() (func(redis.Pipeliner), error) {
		j, err := e.Job(ctx, id)
		if err != nil {
			return nil, err
		}
		if err := change(&j); err != nil {
			return nil, err
		}
		out = j
		return func(p redis.Pipeliner) {
			e.queueSave(ctx, p, j)
			if also != nil {
				also(p)
			}
		}, nil
	})
	return out, err
}

// holding runs f with id's lease renewed meanwhile (hold); f's context
// ends, with errLeaseLost as its cause, once the lease is lost.
func (e *Engine) holding(ctx context.Context, id string, f func(ctx context.Context)) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go e.hold(ctx, id, cancel)
	f(ctx)
}
