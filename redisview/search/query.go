// Package search finds a connection's keys across its databases from one
// line a person typed: a glob pattern (SCAN MATCH, bounded), the id of a
// family of the connection's pack (links to its key lists), or a value —
// an account, a username, an e-mail address, an IP — from which the exact
// keys of every family it can fill are derived (a base64 placeholder in
// every encoding its class allows) and checked in one pipeline per
// database, while families where it fills only some placeholders are
// searched by a bounded SCAN with the value filled in. Never KEYS; every scan has a budget and says where it stopped.
//
// This file is the pure part: reading the query and planning the reads.
package search

import (
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/keydeck/keydeck/redisview/schema"
)

// MaxQuery is the longest query accepted, in bytes.
const MaxQuery = 1 << 10

// Kind is how a query is read.
type Kind string

const (
	Empty  Kind = "empty"
	Glob   Kind = "glob"   // SCAN MATCH the query in every database with keys
	Family Kind = "family" // the id of a family of the pack
	Value  Kind = "value"  // a placeholder value: derive keys, scan where it fills only part
)

// Query is a parsed search.
type Query struct {
	Raw    string
	Kind   Kind
	Family *schema.Family // Kind Family
	// Name restricts a value to the placeholders of that name
	// ("username=alice"); "" lets the value's shape choose.
	Name  string
	Value string // Kind Value: the value, glob escapes removed
}

// Parse reads q against the connection's pack (nil: none).
func Parse(q string, pack *schema.Pack) Query {
	out := Query{Raw: q}
	switch {
	case strings.TrimSpace(q) == "":
		out.Kind = Empty
	case HasWildcard(q):
		out.Kind = Glob
	case pack != nil && pack.Family(q) != nil:
		out.Kind, out.Family = Family, pack.Family(q)
	default:
		out.Kind, out.Value = Value, unescape(q)
		if name, v, ok := strings.Cut(out.Value, "="); ok && v != "" && packHasPlaceholder(pack, name) {
			out.Name, out.Value = name, v
		}
	}
	return out
}

func packHasPlaceholder(pack *schema.Pack, name string) bool {
	if pack == nil || name == "" {
		return false
	}
	for _, f := range pack.Families {
		for _, ph := range f.Pattern.Placeholders() {
			if strings.EqualFold(ph.Name, name) {
				return true
			}
		}
	}
	return false
}

// kinds groups the placeholder names the packs use for the same thing:
// a value that is a username fills {username}, {ownerUsername}, {userId},
// {account}, {principal} alike.
var kinds = map[string]string{
	"username": "user", "ownerusername": "user", "userid": "user", "user": "user",
	"account": "user", "principal": "user", "member": "user",
	"email": "email",
	"ip":    "ip", "clientip": "ip",
	"keyid": "keyId",
}

// KindOf is the kind of a placeholder name ("" for none of the known ones).
func KindOf(name string) string { return kinds[strings.ToLower(name)] }

// ValueKinds are the kinds of placeholder a value may fill, by its shape:
// an IP address fills IPs; an e-mail address fills e-mails and accounts
// (people sign in with either); anything else fills users and key ids.
func ValueKinds(v string) []string {
	switch {
	case net.ParseIP(v) != nil:
		return []string{"ip"}
	case looksLikeEmail(v):
		return []string{"email", "user"}
	default:
		return []string{"user", "keyId"}
	}
}

func looksLikeEmail(v string) bool {
	at := strings.LastIndexByte(v, '@')
	return at > 0 && strings.Contains(v[at+1:], ".") && !strings.ContainsAny(v, " :")
}

// Probe is one exact key to check.
type Probe struct {
	Family *schema.Family
	DB     int
	Key    string
}

// Scan is one bounded SCAN MATCH in one database. A value's scans of one
// database share a cursor: Match is the families' globs merged (their
// common literal start, then the value), and a key it returns counts only
// if one of Globs matches it and the pack classifies it as that family.
// A family whose key holds the value base64-encoded comes once per
// encoding (Families repeats it, each with its own glob).
type Scan struct {
	ID       string // "db.n", stable for the same query and keyspace: the continue link's name
	DB       int
	Match    string
	Families []*schema.Family // nil for a glob query
	Globs    []string         // per entry of Families
}

// Plan is the reads a query needs.
type Plan struct {
	Probes []Probe
	Scans  []Scan
	// Skipped counts the families the value cannot fill (its shape or
	// their classes exclude it), Absent those in no database with keys.
	Skipped, Absent int
}

// PlanGlob scans every database with keys for the pattern.
func PlanGlob(glob string, dbs []int) Plan {
	var p Plan
	for _, db := range dbs {
		p.Scans = append(p.Scans, Scan{ID: strconv.Itoa(db) + ".0", DB: db, Match: glob})
	}
	return p
}

// fill is how one family can take the value.
type fill struct {
	filled []bool // per placeholder
	all    bool
}

// fits decides which placeholders of f the value fills: with name set,
// those of that name; else, a family's only placeholder, or those whose
// kind the value's shape allows. A placeholder whose class or length
// cannot hold the value (encoded as the key holds it) is not filled; ok is
// false when none is.
func fits(f *schema.Family, name, value string) (fill, bool) {
	phs := f.Pattern.Placeholders()
	fl := fill{filled: make([]bool, len(phs))}
	vk := ValueKinds(value)
	n := 0
	for i, ph := range phs {
		want := false
		switch {
		case name != "":
			want = strings.EqualFold(ph.Name, name)
		case len(phs) == 1:
			want = true
		default:
			want = slices.Contains(vk, KindOf(ph.Name))
		}
		if want && accepts(f, i, value) {
			fl.filled[i] = true
			n++
		}
	}
	fl.all = n == len(phs)
	return fl, n > 0
}

// accepts reports whether placeholder i of f can hold value, in some
// encoding its class and length accept.
func accepts(f *schema.Family, i int, value string) bool {
	return len(f.Pattern.Placeholders()[i].Encodings(value)) > 0
}

// PlanValue plans a value search over the pack's families in the
// databases that have keys (dbs, ascending): exact keys where the value
// fills every placeholder, scans where it fills some.
func PlanValue(pack *schema.Pack, name, value string, dbs []int) Plan {
	var p Plan
	if pack == nil {
		return p
	}
	byDB := map[int]*scanGroup{}
	for _, f := range pack.Families {
		var in []int
		for _, db := range dbs {
			if f.InDB(db) {
				in = append(in, db)
			}
		}
		fl, ok := fits(f, name, value)
		if !ok {
			p.Skipped++
			continue
		}
		if len(in) == 0 {
			p.Absent++
			continue
		}
		vars := map[string]string{}
		for i, ph := range f.Pattern.Placeholders() {
			if fl.filled[i] {
				vars[ph.Name] = value
			}
		}
		if fl.all {
			probes, ok := exactProbes(f, vars, in)
			if !ok {
				p.Skipped++
			}
			p.Probes = append(p.Probes, probes...)
			continue
		}
		globs, enc, ok := globsWith(f, vars)
		if !ok {
			p.Skipped++
			continue
		}
		for _, db := range in {
			g := byDB[db]
			if g == nil {
				g = &scanGroup{}
				byDB[db] = g
			}
			g.add(f, globs, enc)
		}
	}
	for _, db := range dbs {
		if g := byDB[db]; g != nil {
			p.Scans = append(p.Scans, g.scans(db)...)
		}
	}
	return p
}

// exactProbes is every key of f holding vars in the databases in: every
// encoding the classes allow (a base64 account: standard or URL-safe,
// padded or not), all checked in the same pipeline. ok is false when
// there are more encodings than schema.MaxKeys.
func exactProbes(f *schema.Family, vars map[string]string, in []int) ([]Probe, bool) {
	keys, err := f.Keys(vars)
	if err != nil {
		return nil, false
	}
	var out []Probe
	for _, db := range in {
		for _, key := range keys {
			out = append(out, Probe{Family: f, DB: db, Key: key})
		}
	}
	return out, true
}

// scanGroup is one database's globs, entry by entry: the family, its
// glob and the encoded form of the value it holds.
type scanGroup struct {
	fams  []*schema.Family
	globs []string
	enc   []string
}

func (g *scanGroup) add(f *schema.Family, globs []string, enc string) {
	for _, glob := range globs {
		g.fams = append(g.fams, f)
		g.globs = append(g.globs, glob)
		g.enc = append(g.enc, enc)
	}
}

// scans is one cursor per encoded form: families whose key holds the
// value the same way share a SCAN of db.
func (g *scanGroup) scans(db int) []Scan {
	var encs []string
	for _, e := range g.enc {
		if !slices.Contains(encs, e) {
			encs = append(encs, e)
		}
	}
	out := make([]Scan, 0, len(encs))
	for n, e := range encs {
		s := Scan{ID: strconv.Itoa(db) + "." + strconv.Itoa(n), DB: db}
		for i := range g.fams {
			if g.enc[i] == e {
				s.Families = append(s.Families, g.fams[i])
				s.Globs = append(s.Globs, g.globs[i])
			}
		}
		s.Match = mergeGlobs(s.Families, s.Globs, e)
		out = append(out, s)
	}
	return out
}

// globsWith is f's pattern as globs with vals filled in, * for the other
// placeholders: one glob per combination of the values' encodings
// (escaped; a base64 placeholder's every encoding). enc is a glob
// fragment that every encoding of the first value filled in contains
// (encFrag): keys with it in the same place share a cursor. ok is false
// when a value fits no encoding or the combinations exceed
// schema.MaxKeys.
func globsWith(f *schema.Family, vals map[string]string) (globs []string, enc string, ok bool) {
	encs, err := f.Pattern.ValueEncodings(vals)
	if err != nil {
		return nil, "", false
	}
	segs := splitPattern(f.Pattern.String())
	for _, s := range segs {
		if s.ph >= 0 && encs[s.ph] != nil {
			enc = encFrag(encs[s.ph])
			break
		}
	}
	schema.EachCombination(encs, func(pick []int) bool {
		var b strings.Builder
		for _, s := range segs {
			switch {
			case s.ph < 0:
				b.WriteString(schema.EscapeGlob(s.lit))
			case encs[s.ph] != nil:
				b.WriteString(schema.EscapeGlob(encs[s.ph][pick[s.ph]]))
			default:
				b.WriteByte('*')
			}
		}
		if g := b.String(); !slices.Contains(globs, g) {
			globs = append(globs, g)
		}
		return true
	})
	return globs, enc, true
}

// encFrag is a glob that matches, somewhere inside, every one of the
// encodings of one value: their common bytes where they agree and a
// [\x\y] set where they differ ("+" or "-", "/" or "_"), up to the
// shortest one's end (the padding is left to a following *).
func encFrag(encs []string) string {
	short := encs[0]
	for _, e := range encs[1:] {
		if len(e) < len(short) {
			short = e
		}
	}
	var b strings.Builder
	for i := 0; i < len(short); i++ {
		var set []byte
		for _, e := range encs {
			if !slices.Contains(set, e[i]) {
				set = append(set, e[i])
			}
		}
		if len(set) == 1 {
			b.WriteString(schema.EscapeGlob(short[i : i+1]))
			continue
		}
		b.WriteByte('[')
		for _, c := range set {
			b.WriteByte('\\')
			b.WriteByte(c)
		}
		b.WriteByte(']')
	}
	return b.String()
}

// mergeGlobs is one glob every key of the globs (of fams, entry by entry)
// matches: the families' common literal start, then *, enc (a glob
// fragment: encFrag), *. The start is the patterns' own, never part of the
// value: the globs of one family in several encodings share the value's
// first bytes. One glob alone is itself.
func mergeGlobs(fams []*schema.Family, globs []string, enc string) string {
	if len(globs) == 1 {
		return globs[0]
	}
	prefix := fams[0].Pattern.LiteralPrefix()
	for _, f := range fams[1:] {
		lp := f.Pattern.LiteralPrefix()
		n := 0
		for n < len(prefix) && n < len(lp) && prefix[n] == lp[n] {
			n++
		}
		prefix = prefix[:n]
	}
	return schema.EscapeGlob(prefix) + "*" + enc + "*"
}

type seg struct {
	lit string
	ph  int // index of the placeholder; -1 for literal text
}

// splitPattern reads a pattern in pack syntax as Pattern.String renders it
// (parameters already substituted; {{, }} and $$ for literal characters).
func splitPattern(src string) []seg {
	var out []seg
	var lit strings.Builder
	n := 0
	for i := 0; i < len(src); i++ {
		switch {
		case strings.HasPrefix(src[i:], "{{"), strings.HasPrefix(src[i:], "}}"), strings.HasPrefix(src[i:], "$$"):
			lit.WriteByte(src[i])
			i++
		case src[i] == '{':
			end := strings.IndexByte(src[i:], '}')
			if end < 0 {
				lit.WriteString(src[i:])
				i = len(src)
				continue
			}
			if lit.Len() > 0 {
				out = append(out, seg{lit: lit.String(), ph: -1})
				lit.Reset()
			}
			out = append(out, seg{ph: n})
			n++
			i += end
		default:
			lit.WriteByte(src[i])
		}
	}
	if lit.Len() > 0 {
		out = append(out, seg{lit: lit.String(), ph: -1})
	}
	return out
}
