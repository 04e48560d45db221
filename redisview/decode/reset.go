package decode

import (
	"sort"
	"strings"

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
