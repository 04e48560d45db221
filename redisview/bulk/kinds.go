package bulk

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Kind is what a job does to each of its items. The engine WATCHes a
// batch's keys, reads their state, and calls Queue, inside MULTI, for
// each item still in its counted state (cur); the kind queues its write
// of that key there (nothing else: no read whose reply it needs). Queue
// returns a Reason* instead to skip the item (nothing queued).
type Kind interface {
	Name() string
	Title() string // a verb for "Delete 1,204 keys"
	Queue(ctx context.Context, tx redis.Pipeliner, j Job, it Item, cur State, now time.Time) (skip string)
}

// The built-in kinds.
const (
	KindDelete  = "delete"  // UNLINK
	KindExpire  = "expire"  // PEXPIREAT now+Spec.TTL
	KindPersist = "persist" // PERSIST
	KindUndo    = "undo"    // RESTORE the prior (REPLACE ABSTTL), or UNLINK a key the job created
)

var (
	kindsMu sync.Mutex
	kinds   = map[string]Kind{}
)

// Register adds a kind (in an init function); names are unique.
func Register(k Kind) {
	kindsMu.Lock()
	defer kindsMu.Unlock()
	if _, dup := kinds[k.Name()]; dup {
		panic("bulk: kind " + k.Name() + " registered twice")
	}
	kinds[k.Name()] = k
}

// KindOf finds a registered kind.
func KindOf(name string) (Kind, bool) {
	kindsMu.Lock()
	defer kindsMu.Unlock()
	k, ok := kinds[name]
	return k, ok
}

func init() {
	Register(deleteKind{})
	Register(expireKind{})
	Register(persistKind{})
	Register(undoKind{})
}

type deleteKind struct{}

func (deleteKind) Name() string  { return KindDelete }
func (deleteKind) Title() string { return "Delete" }
func (deleteKind) Queue(ctx context.Context, tx redis.Pipeliner, _ Job, it Item, _ State, _ time.Time) string {
	tx.Unlink(ctx, it.Key)
	return ""
}

type expireKind struct{}

func (expireKind) Name() string  { return KindExpire }
func (expireKind) Title() string { return "Set the TTL of" }
func (expireKind) Queue(ctx context.Context, tx redis.Pipeliner, j Job, it Item, _ State, now time.Time) string {
	tx.PExpireAt(ctx, it.Key, now.Add(j.Spec.TTL))
	return ""
}

type persistKind struct{}

func (persistKind) Name() string  { return KindPersist }
func (persistKind) Title() string { return "Remove the TTL of" }
func (persistKind) Queue(ctx context.Context, tx redis.Pipeliner, _ Job, it Item, _ State, _ time.Time) string {
	tx.Persist(ctx, it.Key)
	return ""
}

// undoKind's items are a job's priors: Print is the state the job left,
// Payload the encoded prior state.
type undoKind struct{}

func (undoKind) Name() string  { return KindUndo }
func (undoKind) Title() string { return "Restore" }
func (undoKind) Queue(ctx context.Context, tx redis.Pipeliner, _ Job, it Item, cur State, now time.Time) string {
	prior, _, err := decodeUndo(it.Payload)
	if err != nil {
		return ReasonNoPrior
	}
	if !prior.Exists() {
		tx.Unlink(ctx, it.Key) // the job created it
		return ""
	}
	var at int64 // ABSTTL 0: no expiry
	if prior.ExpireAt >= 0 {
		if prior.ExpireAt <= now.UnixMilli() {
			return ReasonExpired
		}
		at = prior.ExpireAt
	}
	if !cur.Exists() {
		// Removed by the TTL the job set (actsOnGone): no REPLACE, so a
		// key created since is refused (BUSYKEY), never overwritten.
		tx.Do(ctx, "RESTORE", it.Key, at, string(prior.Dump), "ABSTTL")
		return ""
	}
	tx.Do(ctx, "RESTORE", it.Key, at, string(prior.Dump), "REPLACE", "ABSTTL")
	return ""
}

// actsOnGone reports an item k acts on though its key is gone: an undo's
// key that the TTL its job set has removed (that expiry passed), whose
// prior state is recorded. The job left it expiring, so "gone" is the
// state it left once that time came.
func actsOnGone(k Kind, it Item, now time.Time) bool {
	if k.Name() != KindUndo {
		return false
	}
	prior, at, err := decodeUndo(it.Payload)
	return err == nil && prior.Exists() && at > 0 && at <= now.UnixMilli()
}

// kindOf is a spec's kind, or an error naming it.
func kindOf(name string) (Kind, error) {
	k, ok := KindOf(name)
	if !ok {
		return nil, fmt.Errorf("%w: unknown bulk kind %q", ErrInvalid, name)
	}
	return k, nil
}
