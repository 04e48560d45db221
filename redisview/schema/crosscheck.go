package schema

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/goccy/go-yaml/ast"
)

// crossCheck runs the checks that need every family: patterns that could
// never be told apart, and companion references.
func (l *loader) crossCheck(p *Pack, paramNodes map[*Family]ast.Node) error {
	for i, f := range p.Families {
		for _, g := range p.Families[:i] {
			if g.Pattern.String() == f.Pattern.String() && dbsOverlap(f, g) {
				return l.errAt(f.Line, "family %q: same pattern as %q (line %d) in the same database; one of them could never match", f.ID, g.ID, g.Line)
			}
		}
	}
	for _, f := range p.Families {
		if f.Params == nil {
			continue
		}
		v := reflect.ValueOf(f.Params).Elem()
		for i := range v.NumField() {
			ref, ok := v.Field(i).Interface().(*Ref)
			if !ok || ref == nil {
				continue
			}
			name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("yaml"), ",")
			fail := func(format string, args ...any) error {
				return l.errAt(fieldLine(paramNodes[f], name), "family %q: params: %s: %s", f.ID, name, fmt.Sprintf(format, args...))
			}
			pat, err := parsePattern(ref.text, p.values)
			if err != nil {
				return fail("pattern %q: %v", ref.text, err)
			}
			ref.Pattern = pat
			for _, g := range p.Families {
				if g.Pattern.shape() == pat.shape() && dbsOverlap(f, g) {
					ref.Family = g
					break
				}
			}
			if ref.Family == nil {
				return fail("%q is the pattern of no family of this pack in the same database", ref.text)
			}
			if err := checkRef(f, name, ref); err != nil {
				return fail("%v", err)
			}
		}
	}
	return nil
}

// checkRef makes sure a reference can be filled from what its referrer
// knows, so Ref.Key never fails for want of a value the pack forgot.
func checkRef(f *Family, name string, ref *Ref) error {
	known := map[string]bool{}
	for _, ph := range f.Pattern.phs {
		known[ph.Name] = true
	}
	switch params := f.Params.(type) {
	case *LeaderboardParams:
		known[params.Member] = true
	case *IndexParams, *StatsParams:
		if name == "of" && len(ref.Pattern.phs) != 1 {
			return fmt.Errorf("%q: an index's target needs exactly one placeholder, which a member fills", ref.text)
		}
		return nil
	default:
		if name == "budget" || name == "bloom" || name == "members" || name == "leaderboard" {
			return nil // linked family, not built from this key's values
		}
	}
	for _, ph := range ref.Pattern.phs {
		if !known[ph.Name] {
			return fmt.Errorf("%q: {%s} is neither a placeholder of this family nor its member", ref.text, ph.Name)
		}
	}
	return nil
}

func dbsOverlap(f, g *Family) bool {
	if f.DBs == nil || g.DBs == nil {
		return true
	}
	for _, db := range f.DBs {
		if slices.Contains(g.DBs, db) {
			return true
		}
	}
	return false
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func listOrNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}
