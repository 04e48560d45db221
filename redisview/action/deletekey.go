package action

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// DeleteKey removes one key of any type.
type DeleteKey struct{}

func init() {
	Register(DeleteKey{})
}

func (DeleteKey) Name() string    { return KindDeleteKey }
func (DeleteKey) Title() string   { return "Delete key" }
func (DeleteKey) Requires() Level { return Admin }
func (DeleteKey) Args() []Arg     { return nil }

func (DeleteKey) Plan(_ context.Context, _ Env, req Request) (Plan, error) {
	if err := checkArgs(req); err != nil {
		return nil, err
	}
	return deletePlan{keys: []string{req.Key}}, nil
}

type deletePlan struct{ keys []string }

func (p deletePlan) Keys() []string { return p.keys }

func (p deletePlan) Describe(states []State) ([]Change, error) {
	out := make([]Change, len(states))
	for i, s := range states {
		if !s.Exists() {
			return nil, fmt.Errorf("%w: key %s does not exist", ErrNotFound, quoteKey(s.Key))
		}
		out[i] = Change{
			Key: s.Key, Op: "delete", After: "absent", Before: s,
			Text: fmt.Sprintf("DELETE %s (%s)", quoteKey(s.Key), s.Shape()),
		}
	}
	return out, nil
}

func (p deletePlan) Apply(ctx context.Context, tx redis.Pipeliner, _ []State) {
	tx.Del(ctx, p.keys...)
}
