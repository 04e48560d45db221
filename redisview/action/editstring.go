package action

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// SetString replaces a string's value, keeping its TTL (SET … KEEPTTL).
type SetString struct{}

func init() { Register(SetString{}) }

func (SetString) Name() string    { return KindSetString }
func (SetString) Title() string   { return "Edit value" }
func (SetString) Requires() Level { return Admin }
func (SetString) KeyType() string { return "string" }
func (SetString) Args() []Arg {
	return valueArgs("the new value, exactly (text, or hex digits for binary)")
}

func (k SetString) Plan(_ context.Context, env Env, req Request) (Plan, error) {
	if err := checkArgs(req, ArgValue, ArgEncoding); err != nil {
		return nil, err
	}
	v, err := decodeValue(req, true)
	if err != nil {
		return nil, err
	}
	if err := checkStringShape(env, familyOf(env, req.DB, req.Key), v); err != nil {
		return nil, err
	}
	return setStringPlan{key: req.Key, value: v}, nil
}

type setStringPlan struct{ key, value string }

func (p setStringPlan) Keys() []string { return []string{p.key} }

func (p setStringPlan) Describe(states []State) ([]Change, error) {
	s := states[0]
	if err := wantType(s, "string", true); err != nil {
		return nil, err
	}
	if !s.Sensitive && !s.Truncated && s.Excerpt == p.value {
		return nil, invalidf("key %s already holds this value", quoteKey(s.Key))
	}
	before := fmt.Sprintf("%d bytes", s.Size)
	if !s.Sensitive {
		before = valueWords(s, s.Excerpt)
		if s.Truncated {
			before = fmt.Sprintf("%d bytes: %q…", s.Size, clipText(s.Excerpt, 60))
		}
	}
	after := State{Key: s.Key, Type: "string", PTTL: s.PTTL, Size: int64(len(p.value)), Unit: "bytes"}
	return []Change{{
		Key: s.Key, Op: "set", After: after.Shape(), Before: s,
		Text: fmt.Sprintf("SET %s to %s (before: %s; %s kept)", quoteKey(s.Key), valueWords(s, p.value), before, s.ttlText()),
	}}, nil
}

func (p setStringPlan) Apply(ctx context.Context, tx redis.Pipeliner, _ []State) {
	tx.SetArgs(ctx, p.key, p.value, redis.SetArgs{KeepTTL: true})
}
