package action

import (
	"context"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// SetListElement replaces the element of a list at an index (LSET).
type SetListElement struct{}

// PushList adds an element at the head or the tail of a list (LPUSH/RPUSH).
type PushList struct{}

func init() {
	Register(SetListElement{})
	Register(PushList{})
}

func (SetListElement) Name() string    { return KindSetListElement }
func (SetListElement) Title() string   { return "Set element at index" }
func (SetListElement) Requires() Level { return Admin }
func (SetListElement) KeyType() string { return "list" }
func (SetListElement) Args() []Arg {
	return append([]Arg{{Name: ArgIndex, Help: "the index (0 is the head, -1 the tail)", Input: InputNumber}},
		valueArgs("the new element, exactly")...)
}

func (SetListElement) Plan(_ context.Context, _ Env, req Request) (Plan, error) {
	if err := checkArgs(req, ArgIndex, ArgValue, ArgEncoding); err != nil {
		return nil, err
	}
	idx, err := strconv.ParseInt(req.Args[ArgIndex], 10, 64)
	if err != nil {
		return nil, invalidf("index %q is not an integer", req.Args[ArgIndex])
	}
	v, err := decodeValue(req, true)
	if err != nil {
		return nil, err
	}
	return listSetPlan{key: req.Key, index: idx, value: v, old: new(oldElement)}, nil
}

type listSetPlan struct {
	key   string
	index int64
	value string
	old   *oldElement // read by prepare, for the preview's before → after
}

// oldElement is the element a list edit replaces, as prepare read it.
type oldElement struct {
	read  bool
	value string
}

// maxElementRead bounds the list whose element prepare reads: the
// element is no larger than the list's exact memory.
const maxElementRead = 4 << 20

func (p listSetPlan) watched() []string { return nil }

// prepare reads the element replaced, only from a list whose exact memory
// bounds it (LLEN, then MEMORY USAGE … SAMPLES 0, as readStates measures);
// otherwise the preview says its index only. At execution it runs under
// the WATCH of the list, so the element read is the one replaced.
func (p listSetPlan) prepare(ctx context.Context, c redis.Cmdable) error {
	*p.old = oldElement{}
	n, err := c.LLen(ctx, p.key).Result()
	if err != nil || n == 0 || n > maxPriorElements {
		return nil // the key's own reads say what is wrong with it
	}
	mem, err := c.MemoryUsage(ctx, p.key, 0).Result() // SAMPLES 0: exact
	if isSyntaxErr(err) {
		mem, err = c.MemoryUsage(ctx, p.key).Result() // the demo measures whole
	}
	if err != nil || mem > maxElementRead {
		return nil
	}
	v, err := c.LIndex(ctx, p.key, p.index).Result()
	if err == nil {
		*p.old = oldElement{read: true, value: v}
	}
	return nil
}

func (p listSetPlan) Keys() []string { return []string{p.key} }

func (p listSetPlan) Describe(states []State) ([]Change, error) {
	s := states[0]
	if err := wantType(s, "list", true); err != nil {
		return nil, err
	}
	if p.index >= s.Size || p.index < -s.Size {
		return nil, invalidf("index %d is out of range: list %s has %d items (0 to %d, or -%d to -1)", p.index, quoteKey(s.Key), s.Size, s.Size-1, s.Size)
	}
	before := s.Shape()
	if p.old.read {
		if p.old.value == p.value && !s.Sensitive {
			return nil, invalidf("item #%d of %s already holds this value", p.index, quoteKey(s.Key))
		}
		before = valueWords(s, p.old.value) + "; " + before
	}
	return []Change{{
		Key: s.Key, Op: "set", After: s.Shape(), Before: s,
		Text: fmt.Sprintf("SET item #%d of %s to %s (before: %s)", p.index, quoteKey(s.Key), valueWords(s, p.value), before),
	}}, nil
}

func (p listSetPlan) Apply(ctx context.Context, tx redis.Pipeliner, _ []State) {
	tx.LSet(ctx, p.key, p.index, p.value)
}

func (PushList) Name() string    { return KindPushList }
func (PushList) Title() string   { return "Push to list" }
func (PushList) Requires() Level { return Admin }
func (PushList) KeyType() string { return "list" }
func (PushList) Args() []Arg {
	return append([]Arg{{Name: ArgSide, Help: "at the tail (right) or the head (left)", Input: InputSelect, Choices: []string{"right", "left"}}},
		valueArgs("the element to add, exactly")...)
}

func (PushList) Plan(_ context.Context, env Env, req Request) (Plan, error) {
	if err := checkArgs(req, ArgSide, ArgValue, ArgEncoding); err != nil {
		return nil, err
	}
	side := req.Args[ArgSide]
	if side != "left" && side != "right" {
		return nil, invalidf("side %q: want left or right", side)
	}
	v, err := decodeValue(req, true)
	if err != nil {
		return nil, err
	}
	if err := checkTypeShape(familyOf(env, req.DB, req.Key), "list"); err != nil {
		return nil, err
	}
	return pushPlan{key: req.Key, left: side == "left", value: v, creates: new(bool)}, nil
}

type pushPlan struct {
	key   string
	left  bool
	value string
	// creates: the list is absent (Describe, under WATCH), so it is read
	// back element-wise, as createPlan's key is.
	creates *bool
}

func (p pushPlan) Keys() []string { return []string{p.key} }

func (p pushPlan) captureHint(int) (string, string) {
	if *p.creates {
		return captureSnapshot, "list"
	}
	return "", ""
}

func (p pushPlan) Describe(states []State) ([]Change, error) {
	s := states[0]
	if err := wantType(s, "list", false); err != nil {
		return nil, err
	}
	*p.creates = !s.Exists()
	after := State{Key: s.Key, Type: "list", PTTL: s.PTTL, Size: max(s.Size, 0) + 1, Unit: "items"}
	where := "tail (RPUSH)"
	if p.left {
		where = "head (LPUSH)"
	}
	return []Change{{
		Key: s.Key, Op: "push", After: after.Shape(), Before: s,
		Text: fmt.Sprintf("PUSH %s at the %s of %s (before: %s)", valueWords(s, p.value), where, quoteKey(s.Key), s.Shape()),
	}}, nil
}

func (p pushPlan) Apply(ctx context.Context, tx redis.Pipeliner, _ []State) {
	if p.left {
		tx.LPush(ctx, p.key, p.value)
	} else {
		tx.RPush(ctx, p.key, p.value)
	}
}
