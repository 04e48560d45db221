package decode

import (
	"context"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview/level"
	"github.com/keydeck/keydeck/redisview/schema"
)

// A limit role registers, in its own file, what Reset limit does to a key
// of the role: it deletes the key, and the limiter starts again from a
// missing key (a counter from zero, a bucket full, a Bucket4j bucket with
// its bandwidths' initial tokens). The action asks this registry which
// families it applies to and, for a role whose key says nothing cheap of
// the limit, what its preview says of a present key.

// Verdict is whether a limit refuses the user now, as far as what was
// read tells; ordered so that max combines the keys of one limit.
type Verdict int

const (
	NotReached Verdict = iota
	Unknown
	Reached
)

// Reset is one role's reset descriptor.
type Reset struct {
	// Applies narrows the role's families a reset applies to (a lock:
	// only one holding its unlock time); nil: every family of the role.
	Applies func(*schema.Family) bool
	// Names is how the list of keys a reset applies to names the role's;
	// "": the role's name.
	Names string
	// Present, for a role whose state the preview does not read, is what
	// a present key means in the preview's words, and Refuses whether it
	// refuses the user now. "": the action reads the limit's detail from
	// the family's params and the key's state.
	Present string
	Refuses Verdict
	// Read, for a role whose level needs more than the preview's read of
	// the key (a token bucket's fields), reads it when the action is
	// planned; its answer is ResetRead.Extra (nil: unknown).
	Read func(ctx context.Context, c redis.Cmdable, key string, f *schema.Family, now time.Time) any
	// Level says where a present key's limit stands, from what the
	// preview read and the family's params, and whether it refuses the
	// user now. nil: Present says it.
	Level func(f *schema.Family, r ResetRead) (LimitLevel, Verdict)
}

// ResetRead is what a reset preview read of a present key: the start of a
// string's value (Cut: not the whole value), a collection's size (-1 not
// known), the role's own Read, and when.
type ResetRead struct {
	Value string
	Cut   bool
	Size  int64
	Extra any
	Now   time.Time
}

// Count is the value as a whole integer, false when it is not one (or
// only its start was read).
func (r ResetRead) Count() (int64, bool) {
	if r.Cut || r.Value == "" {
		return 0, false
	}
	n, err := strconv.ParseInt(r.Value, 10, 64)
	return n, err == nil
}

// LimitLevel is what a reset preview knows of a limit, as numbers and
// durations (level.Limit: views/format writes it).
type LimitLevel = level.Limit

// verdictOf is Reached for a known count at or past the limit,
// NotReached for one below it, Unknown else.
func verdictOf(l LimitLevel) Verdict {
	switch {
	case l.Reached():
		return Reached
	case l.Counted && l.Limit > 0:
		return NotReached
	}
	return Unknown
}

var resetRegistry = map[schema.Role]Reset{}

// registerReset adds a role's reset descriptor; the role's file calls it
// from its init, next to register and registerRow.
func registerReset(r schema.Role, d Reset) {
	if _, dup := resetRegistry[r]; dup {
		panic("decode: reset of role " + string(r) + " registered twice")
	}
	resetRegistry[r] = d
}

// ResetOf is the reset descriptor of family f, false when a reset does
// not apply to f.
func ResetOf(f *schema.Family) (Reset, bool) {
	if f == nil {
		return Reset{}, false
	}
	d, ok := resetRegistry[f.Role]
	if !ok || d.Applies != nil && !d.Applies(f) {
		return Reset{}, false
	}
	return d, true
}

// LevelOf is the reading of a role's key as a limit's level, whether or
// not its reset applies to the family on its own: a sliding window's
// companion lock is read as "locked" by a reset of the window even when
// its value is not an unlock time (HoldsUnlockTime), which alone would not
// make the lock a limit.
func LevelOf(f *schema.Family) (Reset, bool) {
	if f == nil {
		return Reset{}, false
	}
	d, ok := resetRegistry[f.Role]
	return d, ok
}

// ResettableKeys names the keys a reset applies to, for a message: the
// roles reset whole, then those reset for some families.
func ResettableKeys() string {
	var whole, some []string
	for r, d := range resetRegistry {
		switch {
		case d.Applies != nil && d.Names != "":
			some = append(some, d.Names)
		case d.Applies != nil:
			some = append(some, "some keys of role "+string(r))
		default:
			whole = append(whole, string(r))
		}
	}
	sort.Strings(whole)
	sort.Strings(some)
	out := "rate-limit keys (roles " + strings.Join(whole, ", ")
	if len(some) > 0 {
		out += ", or " + strings.Join(some, ", or ")
	}
	return out + ")"
}
