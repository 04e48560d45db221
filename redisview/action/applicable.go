package action

import (
	"fmt"

	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/schema"
)

// Applicable is implemented by kinds that apply only to some keys. Kinds
// that do not implement it apply to any key.
type Applicable interface{ AppliesTo(f *schema.Family) bool } // f is nil for an unclassified key

// AppliesTo reports whether kind k applies to a key of family f (nil: an
// unclassified key), for listing the actions of a key page. It is a hint
// for the UI, not the guard: each kind refuses a wrong key in Plan.
func AppliesTo(k Kind, f *schema.Family) bool {
	a, ok := k.(Applicable)
	return !ok || a.AppliesTo(f)
}

// AppliesTo is false: an undo starts from an audit record, not from a key.
func (Undo) AppliesTo(*schema.Family) bool { return false }

// isLimitLock reports a lock whose value is its unlock time (LockParams
// value "epoch-ms"), such as eIsland's login lock: a rate limiter sets it
// when a limit is exceeded, no worker holds it, so it has no holder to
// show and releasing it is resetting a limit. Reset limit handles it;
// Force-release lock refuses it.
func isLimitLock(f *schema.Family) bool { return decode.HoldsUnlockTime(f) }

// classify finds the family of the request's key for a kind that applies
// only to some families; it refuses (ErrInvalid) a key it cannot place.
// what names the keys the kind applies to, for the message.
func classify(env Env, k Kind, req Request, what string) (schema.Match, *schema.Classifier, error) {
	if req.Key == "" {
		return schema.Match{}, nil, invalidf("key is required")
	}
	var cls *schema.Classifier
	if env.Conn != nil {
		cls = env.Conn.Classifier()
	}
	if cls == nil {
		return schema.Match{}, nil, invalidf("%s applies only to %s, and connection %q has no schema pack to say what %s is", k.Title(), what, req.Conn, quoteKey(req.Key))
	}
	m, ok := cls.Match(req.DB, req.Key)
	if !ok {
		return schema.Match{}, nil, invalidf("%s applies only to %s; %s in database %d belongs to no family of pack %s", k.Title(), what, quoteKey(req.Key), req.DB, cls.Pack().Name)
	}
	return m, cls, nil
}

func notApplicable(k Kind, what, key string, f *schema.Family) error {
	return invalidf("%s applies only to %s; %s is family %s (role %s)", k.Title(), what, quoteKey(key), f.ID, f.Role)
}

// typeMismatch refuses a key whose Redis type is not its family's: it is
// not the limit or lock the pack describes, and a support action relies
// on that description (an admin can still delete it).
func typeMismatch(k Kind, s State, f *schema.Family) error {
	return fmt.Errorf("%w: %s is a %s, but keys of family %s (role %s) are of type %s; %s does not act on a key the schema pack does not describe",
		ErrInvalid, quoteKey(s.Key), s.Type, f.ID, f.Role, f.Type, k.Title())
}
