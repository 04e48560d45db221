// Package schema describes what the keys of a Redis-backed system mean:
// schema packs (YAML, see FORMAT.md) list key families with their database,
// pattern, type, TTL policy, role and role parameters, and a Classifier maps
// a key name to its family in time linear in the name's length, whatever
// the number of patterns. The package is pure logic: it talks to no Redis.
package schema

import (
	"embed"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
)

// Pack is one system's schema. A loaded Pack is immutable and safe to share.
type Pack struct {
	Name        string
	Title       string
	Description string
	Detect      Detect
	Params      []PackParam
	Families    []*Family
	Source      string // file name the pack was loaded from, for messages

	data    []byte            // kept for With
	values  map[string]string // pack parameter values in effect
	clsOnce sync.Once
	cls     *Classifier
	byID    map[string]*Family
}

// Detect holds hints for choosing a pack for a connection. They are data
// for the caller: Score looks only at key names.
type Detect struct {
	// DBs are the databases worth sampling; empty means those the
	// families name, or 0 when every family is database-agnostic.
	DBs []int
	// Keys are literal names whose existence marks the system.
	Keys []string
}

// PackParam is a value the pack's patterns and params refer to as
// ${name}, such as vertique's key namespace.
type PackParam struct {
	Name        string
	Default     string
	Value       string // Default unless overridden with With
	Description string
}

// Family is one kind of key.
type Family struct {
	ID string
	// Title is what pages call the family ("CAPTCHA sends per account");
	// "" when the pack gives none (Name then reads the id).
	Title     string
	DBs       []int // nil: any database
	Pattern   *Pattern
	Type      string // as Redis TYPE reports it; a bitmap is "string"
	TTL       TTLPolicy
	Domain    string
	Role      Role
	Params    any  // *TokenBucketParams etc. per role; nil for roles without params
	Sensitive bool // values are never shown, sent or logged
	// Danger warns of what losing a key of this family does ("deleting it
	// unbans everyone"): shown on the preview of every write to it.
	Danger      string
	Description string
	Line        int // where the family is declared in Pack.Source

	index int // declaration order, the last tie-breaker between patterns
}

// Name is the family as pages title it: the pack's title, or its id in
// words ("slider-rate-create-account" → "Slider rate create account").
func (f *Family) Name() string {
	if f.Title != "" {
		return f.Title
	}
	words := strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r == '.' {
			return ' '
		}
		return r
	}, f.ID)
	if words == "" {
		return ""
	}
	return strings.ToUpper(words[:1]) + words[1:]
}

// InDB reports whether the family's keys live in database db.
func (f *Family) InDB(db int) bool { return f.DBs == nil || slices.Contains(f.DBs, db) }

// TypeViolation compares the type Redis reports for a key (TYPE) with the
// family's, and says what is wrong, or "" when they agree.
func (f *Family) TypeViolation(redisType string) string {
	if redisType == f.Type {
		return ""
	}
	return "type " + redisType + ", pack says " + f.Type
}

// Key builds a key of this family from placeholder values.
func (f *Family) Key(vars map[string]string) (string, error) {
	k, err := f.Pattern.Key(vars)
	if err != nil {
		return "", fmt.Errorf("family %s: %w", f.ID, err)
	}
	return k, nil
}

// Keys builds every key of this family that may hold the placeholder
// values: each base64 placeholder in every encoding its class allows
// (Pattern.Keys).
func (f *Family) Keys(vars map[string]string) ([]string, error) {
	ks, err := f.Pattern.Keys(vars)
	if err != nil {
		return nil, fmt.Errorf("family %s: %w", f.ID, err)
	}
	return ks, nil
}

// Family returns the family with the given id, or nil.
func (p *Pack) Family(id string) *Family { return p.byID[id] }

// Classifier returns the pack's shared classifier, built on first use.
func (p *Pack) Classifier() *Classifier {
	p.clsOnce.Do(func() { p.cls = NewClassifier(p) })
	return p.cls
}

// SampleDBs is where to sample keys when matching a connection to this
// pack: Detect.DBs if given, otherwise every database a family names.
func (p *Pack) SampleDBs() []int {
	if len(p.Detect.DBs) > 0 {
		return slices.Clone(p.Detect.DBs)
	}
	var dbs []int
	for _, f := range p.Families {
		for _, db := range f.DBs {
			if !slices.Contains(dbs, db) {
				dbs = append(dbs, db)
			}
		}
	}
	if len(dbs) == 0 {
		return []int{0}
	}
	slices.Sort(dbs)
	return dbs
}

// With returns the pack reloaded with some parameters overridden, for
// deployments that differ from the defaults (another vertique namespace,
// another q:rps capacity). Unknown names are an error.
func (p *Pack) With(values map[string]string) (*Pack, error) {
	merged := map[string]string{}
	for k, v := range p.values {
		merged[k] = v
	}
	for k, v := range values {
		if !slices.ContainsFunc(p.Params, func(pp PackParam) bool { return pp.Name == k }) {
			names := make([]string, len(p.Params))
			for i, pp := range p.Params {
				names[i] = pp.Name
			}
			return nil, fmt.Errorf("pack %s has no parameter %q (has: %s)", p.Name, k, listOrNone(names))
		}
		merged[k] = v
	}
	return load(p.Source, p.data, merged)
}

//go:embed packs/*.yaml
var builtinFS embed.FS

var builtin = sync.OnceValue(func() []*Pack {
	entries, err := builtinFS.ReadDir("packs")
	if err != nil {
		panic(err)
	}
	var packs []*Pack
	for _, e := range entries {
		data, err := builtinFS.ReadFile(path.Join("packs", e.Name()))
		if err != nil {
			panic(err)
		}
		p, err := Load(e.Name(), data)
		if err != nil {
			panic("schema: built-in pack: " + err.Error())
		}
		packs = append(packs, p)
	}
	return packs
})

// Builtin returns the packs shipped with Keydeck (eisland, gateway,
// vertique), sorted by name. The packs are shared; do not modify them.
func Builtin() []*Pack { return slices.Clone(builtin()) }

// BuiltinPack returns the built-in pack with the given name, or nil.
func BuiltinPack(name string) *Pack {
	for _, p := range builtin() {
		if p.Name == name {
			return p
		}
	}
	return nil
}
