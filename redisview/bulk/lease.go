package bulk

import (
	"context"

	"github.com/redis/go-redis/v9"
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
