package schema

import (
	"fmt"
	"regexp"
	"strings"
)

// reference is the slow, obviously-correct matcher the automaton is checked
// against: one anchored regexp per family, tried in turn, lazy groups so
// that submatches follow the documented left-to-right shortest rule.
type reference struct {
	fams []*Family
	res  []*regexp.Regexp
}

var classRE = [numClasses]string{
	ClassAny:       `(?s:.)`,
	ClassSegment:   `[^:]`,
	ClassDigits:    `[0-9]`,
	ClassHex:       `[0-9a-f]`,
	ClassAlnum:     `[A-Za-z0-9]`,
	ClassUpper:     `[A-Z0-9_]`,
	ClassBase64:    `[A-Za-z0-9+/=_\-]`,
	ClassBase64URL: `[A-Za-z0-9+/=_\-]`,
}

func newReference(p *Pack) *reference {
	r := &reference{fams: p.Families}
	for _, f := range p.Families {
		var b strings.Builder
		b.WriteString(`^`)
		for _, s := range f.Pattern.segs {
			if s.ph < 0 {
				b.WriteString(regexp.QuoteMeta(s.lit))
				continue
			}
			ph := f.Pattern.phs[s.ph]
			if ph.Len > 0 {
				fmt.Fprintf(&b, "(%s{%d})", classRE[ph.Class], ph.Len)
			} else {
				fmt.Fprintf(&b, "(%s+?)", classRE[ph.Class])
			}
		}
		b.WriteString(`$`)
		r.res = append(r.res, regexp.MustCompile(b.String()))
	}
	return r
}

// match returns the winning family and its raw placeholder values.
func (r *reference) match(db int, key string) (*Family, []string) {
	var best *Family
	var vals []string
	for i, f := range r.fams {
		if !f.InDB(db) {
			continue
		}
		m := r.res[i].FindStringSubmatch(key)
		if m == nil {
			continue
		}
		if best == nil || f.Pattern.literal > best.Pattern.literal {
			best, vals = f, m[1:]
		}
	}
	return best, vals
}
