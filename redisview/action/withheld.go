package action

import (
	"slices"
	"strings"

	"github.com/keydeck/keydeck/redisview"
)

// namedPlan is implemented by a plan some of whose keys are built from an
// argument: a leaderboard entry's metadata and high-score keys carry the
// member in their names. Where that argument is withheld (Arg.Data, on an
// action touching a sensitive key), so is each such key's name, wherever
// the argument would be: previews, outcomes, audit records, errors. The
// key is still read, watched and acted on by its real name.
type namedPlan interface {
	namedAfter() []namedKey
}

// namedKey is one key built from an argument, and what stands in for its
// name where the argument is withheld. The stand-in must not contain the
// argument, and must differ from the plan's other stand-ins.
type namedKey struct {
	Key, Arg, StandIn string
}

// withheld maps real key names to their stand-ins; nil withholds nothing.
type withheld map[string]string

// withheldKeys finds the keys of plan p whose names are withheld.
func withheldKeys(conn *redisview.Conn, k Kind, req Request, p Plan, keys []string) withheld {
	np, ok := p.(namedPlan)
	if !ok || k == nil || !dataWithheld(conn, req, keys) {
		return nil
	}
	var out withheld
	for _, n := range np.namedAfter() {
		if n.Key == req.Key || !slices.Contains(keys, n.Key) ||
			!slices.ContainsFunc(k.Args(), func(a Arg) bool { return a.Name == n.Arg && a.Data }) {
			continue
		}
		if out == nil {
			out = withheld{}
		}
		out[n.Key] = n.StandIn
	}
	return out
}

// key is what shows for key k.
func (w withheld) key(k string) string {
	if s, ok := w[k]; ok {
		return s
	}
	return k
}

func (w withheld) keys(keys []string) []string {
	if len(w) == 0 || keys == nil {
		return keys
	}
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = w.key(k)
	}
	return out
}

// states are copies of ss under their shown names, for describing: a
// plan's Describe then words its changes with the stand-ins. Apply is
// given the real states.
func (w withheld) states(ss []State) []State {
	if len(w) == 0 {
		return ss
	}
	out := slices.Clone(ss)
	for i := range out {
		out[i].Key = w.key(out[i].Key)
	}
	return out
}

func (w withheld) targets(ts []Target) []Target {
	for i := range ts {
		ts[i].Key = w.key(ts[i].Key)
	}
	return ts
}

// text replaces each withheld name in s, quoted (as quoteKey writes it in
// messages) or bare (as a server's reply may carry it).
func (w withheld) text(s string) string {
	for _, k := range w.sorted() {
		s = strings.ReplaceAll(s, quoteKey(k), quoteKey(w[k]))
	}
	for _, k := range w.sorted() {
		s = strings.ReplaceAll(s, k, w[k])
	}
	return s
}

// sorted lists the real names longest first, so that a name containing
// another is replaced whole.
func (w withheld) sorted() []string {
	ks := make([]string, 0, len(w))
	for k := range w {
		ks = append(ks, k)
	}
	slices.SortFunc(ks, func(a, b string) int { return len(b) - len(a) })
	return ks
}

// err rewords err without the withheld names; errors.Is still sees
// through it.
func (w withheld) err(err error) error {
	if err == nil || len(w) == 0 {
		return err
	}
	msg := w.text(err.Error())
	if msg == err.Error() {
		return err
	}
	return withheldErr{err: err, msg: msg}
}

type withheldErr struct {
	err error
	msg string
}

func (e withheldErr) Error() string { return e.msg }
func (e withheldErr) Unwrap() error { return e.err }

// dataWithheld reports an action whose data arguments (Arg.Data: a member,
// a field, a name) are withheld: one that touches a key of a sensitive
// family, whose members are data.
func dataWithheld(conn *redisview.Conn, req Request, keys []string) bool {
	if conn == nil {
		return false
	}
	// Conn.Sensitive, not the classifier: before the first sampling there
	// is none, and every key is withheld.
	return slices.ContainsFunc(append([]string{req.Key}, keys...), func(key string) bool { return conn.Sensitive(req.DB, key) })
}
