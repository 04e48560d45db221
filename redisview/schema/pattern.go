package schema

import (
	"encoding/base64"
	"fmt"
	"math/bits"
	"strings"
	"unicode/utf8"
)

// Class is the set of bytes a placeholder may hold. Classes exist for two
// Placeholder is one {name} or {name:classN} of a pattern.
type Placeholder struct {
	Name  string
	Class Class
	Len   int // exact length in bytes; 0 means one or more
}

func (p Placeholder) String() string {
	if p.Class == ClassAny && p.Len == 0 {
		return "{" + p.Name + "}"
	}
	if p.Len == 0 {
		return "{" + p.Name + ":" + p.Class.String() + "}"
	}
	return fmt.Sprintf("{%s:%s%d}", p.Name, p.Class, p.Len)
}

// segment is a literal run or a placeholder; ph < 0 marks a literal.
type segment struct {
	lit string
	ph  int
}

// Pattern is a compiled key pattern: literal text and placeholders, with
// pack parameters already substituted.
type Pattern struct {
	segs    []segment
	phs     []Placeholder
	literal int
}

// Placeholders lists the pattern's placeholders in order.
func (p *Pattern) Placeholders() []Placeholder { return append([]Placeholder(nil), p.phs...) }

// Specificity is the number of literal bytes; when several patterns accept a
// key, the most specific one wins.
func (p *Pattern) Specificity() int { return p.literal }

// String renders the pattern in pack syntax, parameters substituted and
// braces escaped, so it can be parsed back.
func (p *Pattern) String() string {
	var b strings.Builder
	for _, s := range p.segs {
		if s.ph >= 0 {
			b.WriteString(p.phs[s.ph].String())
			continue
		}
		r := strings.NewReplacer("{", "{{", "}", "}}", "$", "$$")
		b.WriteString(r.Replace(s.lit))
	}
	return b.String()
}

// shape is the pattern with placeholder names and classes erased; two
// patterns with the same shape describe the same keys for a companion
// reference, even if the author named a placeholder differently.
func (p *Pattern) shape() string {
	var b strings.Builder
	for _, s := range p.segs {
		if s.ph >= 0 {
			b.WriteString("\x00{}")
			continue
		}
		b.WriteString(s.lit)
	}
	return b.String()
}

const maxPlaceholderLen = 4096

// parsePattern compiles pattern syntax: literal bytes, {name}, {name:class}
// or {name:classN}, {{ and }} for literal braces, ${param} for a pack
// parameter's value (inserted as literal text) and $$ for a literal $.
func parsePattern(src string, params map[string]string) (*Pattern, error) {
	p := &Pattern{}
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			p.segs = append(p.segs, segment{lit: lit.String(), ph: -1})
			p.literal += lit.Len()
			lit.Reset()
		}
	}
	names := map[string]bool{}
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '{' && strings.HasPrefix(src[i:], "{{"):
			lit.WriteByte('{')
			i += 2
		case c == '}' && strings.HasPrefix(src[i:], "}}"):
			lit.WriteByte('}')
			i += 2
		case c == '}':
			return nil, fmt.Errorf("unmatched \"}\" at byte %d (write }} for a literal brace)", i+1)
		case c == '$' && strings.HasPrefix(src[i:], "$$"):
			lit.WriteByte('$')
			i += 2
		case c == '$' && strings.HasPrefix(src[i:], "${"):
			end := strings.IndexByte(src[i:], '}')
			if end < 0 {
				return nil, fmt.Errorf("unclosed \"${\" at byte %d", i+1)
			}
			name := src[i+2 : i+end]
			v, ok := params[name]
			if !ok {
				return nil, fmt.Errorf("unknown pack parameter %q at byte %d (declared: %s)", name, i+1, listOrNone(sortedKeys(params)))
			}
			lit.WriteString(v)
			i += end + 1
		case c == '{':
			end := strings.IndexByte(src[i+1:], '}')
			if nested := strings.IndexByte(src[i+1:], '{'); end < 0 || (nested >= 0 && nested < end) {
				return nil, fmt.Errorf("unclosed \"{\" at byte %d", i+1)
			}
			ph, err := parsePlaceholder(src[i+1 : i+1+end])
			if err != nil {
				return nil, fmt.Errorf("placeholder at byte %d: %w", i+1, err)
			}
			if names[ph.Name] {
				return nil, fmt.Errorf("placeholder {%s} appears twice", ph.Name)
			}
			names[ph.Name] = true
			if lit.Len() == 0 && len(p.segs) > 0 && p.segs[len(p.segs)-1].ph >= 0 {
				prev := p.phs[p.segs[len(p.segs)-1].ph]
				return nil, fmt.Errorf("placeholders {%s} and {%s} touch: put literal text between them, or where one ends is ambiguous", prev.Name, ph.Name)
			}
			flush()
			p.segs = append(p.segs, segment{ph: len(p.phs)})
			p.phs = append(p.phs, ph)
			i += end + 2
		default:
			lit.WriteByte(c)
			i++
		}
	}
	flush()
	if p.literal == 0 {
		return nil, fmt.Errorf("no literal text: the pattern would match every key")
	}
	return p, nil
}

func parsePlaceholder(body string) (Placeholder, error) {
	name, spec, typed := strings.Cut(body, ":")
	if !validName(name) {
		return Placeholder{}, fmt.Errorf("bad name %q: use letters, digits and _, not starting with a digit", name)
	}
	ph := Placeholder{Name: name}
	if !typed {
		return ph, nil
	}
	// Longest class name first: "base64url8" is base64url of length 8.
	for c := numClasses - 1; ; c-- {
		rest, ok := strings.CutPrefix(spec, classNames[c])
		if ok && (rest == "" || allDigits(rest)) {
			ph.Class = c
			if rest != "" {
				n := 0
				for _, d := range rest {
					n = n*10 + int(d-'0')
					if n > maxPlaceholderLen {
						break
					}
				}
				if n < 1 || n > maxPlaceholderLen {
					return Placeholder{}, fmt.Errorf("{%s}: length %s out of range 1..%d", name, rest, maxPlaceholderLen)
				}
				ph.Len = n
			}
			return ph, nil
		}
		if c == 0 {
			break
		}
	}
	return Placeholder{}, fmt.Errorf("{%s}: unknown class %q (known: %s, each optionally followed by a length, e.g. hex8)", name, spec, strings.Join(classNames[:], ", "))
}

func validName(s string) bool {
	if s == "" || (s[0] >= '0' && s[0] <= '9') {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
			return false
		}
	}
	return true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// split returns the raw placeholder values of key, or false if the pattern
// does not accept it. Placeholders are filled left to right, each taking
// the shortest value that still lets the rest of the key match: the choice
// a backtracking regexp with lazy quantifiers makes, computed without
// backtracking. A right-to-left pass marks, per segment, every position
// where that segment can start and the remainder still match; the forward
// pass then picks the first such end for each placeholder. Each segment's
// pass visits only the positions the next segment marked, plus each byte
// of a placeholder's run at most once, so the cost is O(segments × len(key))
// at worst and close to O(len(key)) for ordinary keys.
func (p *Pattern) split(key string) ([]string, bool) {
	n, m := len(p.segs), len(key)
	words := m/64 + 1
	ok := make([]uint64, (n+1)*words)
	row := func(i int) []uint64 { return ok[i*words : (i+1)*words] }
	at := func(r []uint64, pos int) bool { return r[pos/64]&(1<<(pos%64)) != 0 }
	mark := func(r []uint64, pos int) { r[pos/64] |= 1 << (pos % 64) }
	// descending calls f for each marked position of r, highest first.
	descending := func(r []uint64, f func(pos int)) {
		for w := len(r) - 1; w >= 0; w-- {
			for bitsLeft := r[w]; bitsLeft != 0; {
				b := 63 - bits.LeadingZeros64(bitsLeft)
				bitsLeft &^= 1 << b
				f(w*64 + b)
			}
		}
	}
	mark(row(n), m)
	for i := n - 1; i >= 0; i-- {
		s, cur, next := p.segs[i], row(i), row(i+1)
		if s.ph < 0 {
			l := len(s.lit)
			descending(next, func(e int) {
				if e >= l && key[e-l:e] == s.lit {
					mark(cur, e-l)
				}
			})
			continue
		}
		ph := p.phs[s.ph]
		if ph.Len > 0 {
			descending(next, func(e int) {
				pos := e - ph.Len
				if pos < 0 {
					return
				}
				for j := pos; j < e; j++ {
					if !ph.Class.accepts(key[j]) {
						return
					}
				}
				mark(cur, pos)
			})
			continue
		}
		// Every position from which a run of the class reaches a marked
		// end. Walking left from the highest end first, a walk can stop at
		// the first position an earlier walk already marked.
		descending(next, func(e int) {
			for pos := e - 1; pos >= 0 && !at(cur, pos) && ph.Class.accepts(key[pos]); pos-- {
				mark(cur, pos)
			}
		})
	}
	if !at(row(0), 0) {
		return nil, false
	}
	vals := make([]string, len(p.phs))
	pos := 0
	for i, s := range p.segs {
		switch {
		case s.ph < 0:
			pos += len(s.lit)
		case p.phs[s.ph].Len > 0:
			vals[s.ph] = key[pos : pos+p.phs[s.ph].Len]
			pos += p.phs[s.ph].Len
		default:
			e := pos + 1
			for !at(row(i+1), e) {
				e++
			}
			vals[s.ph] = key[pos:e]
			pos = e
		}
	}
	return vals, true
}

// decodeBase64 accepts standard and URL-safe alphabets, padded or not,
// because the seeds say "base64(account)" without naming a variant. Values
// that do not decode to UTF-8 text are reported undecoded: a placeholder that
// merely looks like base64 is more likely raw text than binary.
func decodeBase64(raw string) (string, bool) {
	s := strings.TrimRight(raw, "=")
	s = strings.NewReplacer("-", "+", "_", "/").Replace(s)
	b, err := base64.RawStdEncoding.DecodeString(s)
	if err != nil || !utf8.Valid(b) {
		return raw, false
	}
	return string(b), true
}

// LiteralPrefix is the literal text every key of the pattern starts with
// (parameters substituted, braces unescaped), or "" when the pattern starts
// with a placeholder. A key list walks SCAN MATCH <prefix>* with it.
func (p *Pattern) LiteralPrefix() string {
	if len(p.segs) == 0 || p.segs[0].ph >= 0 {
		return ""
	}
	return p.segs[0].lit
}

// LongestLiteral is the pattern's longest literal run (the first of equal
// length): every key of the pattern contains it, so a walk of a pattern
// without a literal prefix can still MATCH *<literal>*.
func (p *Pattern) LongestLiteral() string {
	best := ""
	for _, s := range p.segs {
		if s.ph < 0 && len(s.lit) > len(best) {
			best = s.lit
		}
	}
	return best
}
