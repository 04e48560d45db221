package action

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/views/format"
)

// SetTTL gives a key a new lifetime, or removes its TTL ("persist").
type SetTTL struct{}

func init() {
	Register(SetTTL{})
}

func (SetTTL) Name() string    { return KindSetTTL }
func (SetTTL) Title() string   { return "Set TTL" }
func (SetTTL) Requires() Level { return Admin }
func (SetTTL) Args() []Arg {
	return []Arg{{Name: ArgTTL, Help: `a duration from 1s to 365d (90s, 10m, 2h, 7d, 1d12h), or "persist" to remove the TTL`}}
}

func (SetTTL) Plan(_ context.Context, _ Env, req Request) (Plan, error) {
	if err := checkArgs(req, ArgTTL); err != nil {
		return nil, err
	}
	raw, ok := req.Args[ArgTTL]
	if !ok {
		return nil, invalidf("ttl is required")
	}
	d, persist, err := parseTTL(raw)
	if err != nil {
		return nil, err
	}
	return ttlPlan{key: req.Key, ttl: d, persist: persist}, nil
}

type ttlPlan struct {
	key     string
	ttl     time.Duration
	persist bool
}

func (p ttlPlan) Keys() []string { return []string{p.key} }

func (p ttlPlan) Describe(states []State) ([]Change, error) {
	s := states[0]
	if !s.Exists() {
		return nil, fmt.Errorf("%w: key %s does not exist", ErrNotFound, quoteKey(s.Key))
	}
	if p.persist {
		if _, has := s.TTL(); !has {
			return nil, invalidf("key %s already has no TTL", quoteKey(s.Key))
		}
		return []Change{{
			Key: s.Key, Op: "persist", After: "no TTL", Before: s,
			Text: fmt.Sprintf("REMOVE TTL of %s (before: %s)", quoteKey(s.Key), s.ttlText()),
		}}, nil
	}
	return []Change{{
		Key: s.Key, Op: "expire", After: "TTL " + format.Duration(p.ttl), Before: s,
		Text: fmt.Sprintf("SET TTL %s on %s (before: %s)", format.Duration(p.ttl), quoteKey(s.Key), s.ttlText()),
	}}, nil
}

func (p ttlPlan) Apply(ctx context.Context, tx redis.Pipeliner, _ []State) {
	if p.persist {
		tx.Persist(ctx, p.key)
	} else {
		tx.PExpire(ctx, p.key, p.ttl)
	}
}
