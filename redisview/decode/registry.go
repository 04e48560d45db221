package decode

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview/schema"
)

// Class is what a role's keys are for, as the pages that list keys by
// meaning see them: the Rate limits page shows limits, the Locks page
// locks, the Quotas page budgets.
type Class int

const (
	ClassNone   Class = iota
	ClassLimit        // a rate limit: token buckets, windows, counters with a limit
	ClassLock         // a lock or a cooldown
	ClassBudget       // a quota, balance, reservation, concurrency set or breaker hint
)

// Input is one key to read and what its reader needs beyond its replies.
type Input struct {
	Key   string
	Match schema.Match
	Env   Env
	Now   time.Time

	c     redis.Cmdable // for a bounded step that is not one command (a SCAN)
	batch *batch
}

// finish builds a key's state from the replies of the commands its reader
// queued. next, when not nil, is a second phase: it queues more commands,
// sent with every other key's second phase in one more round trip.
type finish func() (state any, next step, err error)

// step queues a key's commands on p and says how to finish from them.
type step func(ctx context.Context, p redis.Pipeliner, in *Input) finish

// role is one registered role's reader.
type role struct {
	read  step
	class func(f *schema.Family) Class
}

var registry = map[schema.Role]role{}

// register adds a role's reader; each role's file calls it from its init.
// class may be nil (ClassNone) or give the class of a family.
func register(r schema.Role, class func(*schema.Family) Class, read step) {
	if _, dup := registry[r]; dup {
		panic("decode: role " + string(r) + " registered twice")
	}
	registry[r] = role{read: read, class: class}
}

// always is a class function for roles whose every family has class c.
func always(c Class) func(*schema.Family) Class {
	return func(*schema.Family) Class { return c }
}

// Supported reports whether a role has a reader.
func Supported(r schema.Role) bool {
	_, ok := registry[r]
	return ok
}

// ClassOf is the class of family f (ClassNone for nil or a role without
// a class).
func ClassOf(f *schema.Family) Class {
	if f == nil {
		return ClassNone
	}
	if r, ok := registry[f.Role]; ok && r.class != nil {
		return r.class(f)
	}
	return ClassNone
}

// firstErr is the first error of cmds, a nil reply (redis.Nil) aside; a
// command not queued (a nil pointer) has none.
func firstErr(cmds ...redis.Cmder) error {
	for _, c := range cmds {
		if c == nil || reflect.ValueOf(c).IsNil() {
			continue
		}
		if err := c.Err(); err != nil && !errors.Is(err, redis.Nil) {
			return err
		}
	}
	return nil
}

// done is a finish with no second phase.
func done(state any, err error) (any, step, error) { return state, nil, err }

// paramsClass is class c for a family whose params are a P, ClassNone for
// one whose params did not load as the role's.
func paramsClass[P any](c Class) func(*schema.Family) Class {
	return func(f *schema.Family) Class {
		if _, ok := f.Params.(P); ok {
			return c
		}
		return ClassNone
	}
}

// Roles is every role with a reader, in name order.
func Roles() []schema.Role {
	out := make([]schema.Role, 0, len(registry))
	for r := range registry {
		out = append(out, r)
	}
	slices.Sort(out)
	return out
}
