package schema

import (
	"cmp"
	"slices"
)

// Classifier maps (database, key name) to the family it belongs to. It is
// safe for concurrent use; build it once per pack (Pack.Classifier shares
// one).
//
// When several patterns accept a key, the one with the most literal bytes
// wins, then the one declared first: `mg:score:leaderboard:refresh:rate:{gameId}:{userId}`
// beats `mg:score:leaderboard:{gameId}` for a refresh counter.
type Classifier struct {
	pack  *Pack
	byDB  []*dfa // families that live in that database, or in any
	other *dfa   // databases no family names: the database-agnostic families
}

// NewClassifier compiles the pack's patterns, one automaton per database
// the pack names plus one for every other database.
func NewClassifier(p *Pack) *Classifier { return newClassifier(p, defaultMaxStates) }

func newClassifier(p *Pack, maxStates int) *Classifier {
	ranked := slices.Clone(p.Families)
	slices.SortStableFunc(ranked, func(a, b *Family) int {
		if c := cmp.Compare(b.Pattern.literal, a.Pattern.literal); c != 0 {
			return c
		}
		return cmp.Compare(a.index, b.index)
	})
	build := func(keep func(*Family) bool) *dfa {
		var fams []*Family
		for _, f := range ranked {
			if keep(f) {
				fams = append(fams, f)
			}
		}
		if len(fams) == 0 {
			return nil
		}
		return newDFA(fams, maxStates)
	}
	c := &Classifier{pack: p}
	maxNamed := -1
	for _, f := range p.Families {
		for _, db := range f.DBs {
			maxNamed = max(maxNamed, db)
		}
	}
	c.byDB = make([]*dfa, maxNamed+1)
	for db := range c.byDB {
		named := false
		for _, f := range p.Families {
			named = named || slices.Contains(f.DBs, db)
		}
		if named {
			c.byDB[db] = build(func(f *Family) bool { return f.InDB(db) })
		}
	}
	c.other = build(func(f *Family) bool { return f.DBs == nil })
	for db, d := range c.byDB {
		if d == nil {
			c.byDB[db] = c.other
		}
	}
	return c
}

// Pack is the pack the classifier was built from.
func (c *Classifier) Pack() *Pack { return c.pack }

func (c *Classifier) automaton(db int) *dfa {
	if db >= 0 && db < len(c.byDB) {
		return c.byDB[db]
	}
	return c.other
}

// Classify returns the family of key in database db.
func (c *Classifier) Classify(db int, key string) (*Family, bool) {
	d := c.automaton(db)
	if d == nil {
		return nil, false
	}
	r := d.run(key)
	if r < 0 {
		return nil, false
	}
	return d.families[r], true
}

// Var is one placeholder's value in a classified key.
type Var struct {
	Name    string
	Raw     string // as it appears in the key
	Value   string // decoded for base64 placeholders, else Raw
	Decoded bool   // Value differs from Raw by decoding
}

// Match is a classified key with its placeholder values.
type Match struct {
	Family *Family
	Vars   []Var
}

// Get returns the (decoded) value of the named placeholder.
func (m Match) Get(name string) (string, bool) {
	for _, v := range m.Vars {
		if v.Name == name {
			return v.Value, true
		}
	}
	return "", false
}

// Map returns the (decoded) placeholder values by name.
func (m Match) Map() map[string]string {
	out := make(map[string]string, len(m.Vars))
	for _, v := range m.Vars {
		out[v.Name] = v.Value
	}
	return out
}

// Match classifies key and extracts the winning pattern's placeholder
// values. A value may itself contain the separator that follows it (a
// username "ops:admin"); placeholders are then filled left to right, each
// with the shortest value that lets the rest of the key match, so a narrow
// class on a later placeholder (segment, digits, upper) is what lets an
// earlier one keep its colons. Base64 placeholders are decoded when they
// decode to UTF-8 text.
func (c *Classifier) Match(db int, key string) (Match, bool) {
	f, ok := c.Classify(db, key)
	if !ok {
		return Match{}, false
	}
	raw, ok := f.Pattern.split(key)
	if !ok { // unreachable: the automaton accepted this pattern
		return Match{}, false
	}
	m := Match{Family: f, Vars: make([]Var, len(raw))}
	for i, ph := range f.Pattern.phs {
		v := Var{Name: ph.Name, Raw: raw[i], Value: raw[i]}
		if ph.Class.Decodes() {
			v.Value, v.Decoded = decodeBase64(raw[i])
		}
		m.Vars[i] = v
	}
	return m, true
}
