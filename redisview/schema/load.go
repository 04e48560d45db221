package schema

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// LoadError is a malformed pack: the file, the line (0 when unknown) and
// what is wrong, printed as "file:line: message".
type LoadError struct {
	File string
	Line int
	Msg  string
}

func (e *LoadError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return e.File + ": " + e.Msg
}

// LoadFile reads and loads a pack; errors name the path as given.
func LoadFile(path string) (*Pack, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Load(path, data)
}

// Load parses a pack from YAML; name is the file name used in errors.
func Load(name string, data []byte) (*Pack, error) { return load(name, data, nil) }

// The YAML-facing shapes. Fields that need positions or custom parsing stay
// ast.Node so that each error can name its own line, and every struct is
// flat so an unknown field can be answered with the list of known ones.
type packSpec struct {
	Name        string   `yaml:"name"`
	Title       string   `yaml:"title"`
	Description string   `yaml:"description"`
	Detect      ast.Node `yaml:"detect"`
	Params      ast.Node `yaml:"params"`
	Families    ast.Node `yaml:"families"`
}

type detectSpec struct {
	DBs  []int    `yaml:"dbs"`
	Keys []string `yaml:"keys"`
}

type paramSpec struct {
	Default     any    `yaml:"default"`
	Description string `yaml:"description"`
}

type familySpec struct {
	ID          string   `yaml:"id"`
	Title       string   `yaml:"title"`
	DB          ast.Node `yaml:"db"`
	Pattern     string   `yaml:"pattern"`
	Type        string   `yaml:"type"`
	TTL         ast.Node `yaml:"ttl"`
	Domain      string   `yaml:"domain"`
	Role        string   `yaml:"role"`
	Params      ast.Node `yaml:"params"`
	Sensitive   bool     `yaml:"sensitive"`
	Danger      string   `yaml:"danger"`
	Description string   `yaml:"description"`
}

type ttlSpec struct {
	Min time.Duration `yaml:"min"`
	Max time.Duration `yaml:"max"`
}

const maxDB = 65535

var (
	packNameRE = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,31}$`)
	familyIDRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)
	wholeParam = regexp.MustCompile(`^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$`)
	decimal    = regexp.MustCompile(`^[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$`)
	// unquotedBrace spots the commonest YAML slip in a pack: pattern: {x}:y
	unquotedBrace = regexp.MustCompile(`:\s+\{[A-Za-z_][A-Za-z0-9_]*(:[a-z0-9]+)?\}[^,}\s]`)
)

func load(name string, data []byte, overrides map[string]string) (*Pack, error) {
	l := &loader{file: name}
	file, err := parser.ParseBytes(data, 0)
	if err != nil {
		var ye yaml.Error
		if errors.As(err, &ye) && ye.GetToken() != nil && ye.GetToken().Position != nil {
			ln := ye.GetToken().Position.Line
			msg := ye.GetMessage()
			if lines := strings.Split(string(data), "\n"); ln >= 1 && ln <= len(lines) && unquotedBrace.MatchString(lines[ln-1]) {
				msg += " (quote patterns: a value starting with { is a YAML mapping)"
			}
			return nil, l.errAt(ln, "%s", msg)
		}
		return nil, l.errAt(0, "%v", err)
	}
	if len(file.Docs) == 0 || file.Docs[0].Body == nil {
		return nil, l.errAt(0, "empty pack")
	}
	if len(file.Docs) > 1 {
		return nil, l.errAt(line(file.Docs[1].Body), "one pack per file: found a second YAML document")
	}
	body := file.Docs[0].Body
	var ps packSpec
	if err := l.decode(body, &ps, ""); err != nil {
		return nil, err
	}
	p := &Pack{Name: ps.Name, Title: ps.Title, Description: ps.Description, Source: name,
		data: data, byID: map[string]*Family{}}
	if !packNameRE.MatchString(ps.Name) {
		return nil, l.errAt(fieldLine(body, "name"), "name %q: want 1-32 lower-case letters, digits, - or _, starting with a letter", ps.Name)
	}
	if p.Title == "" {
		p.Title = p.Name
	}
	if err := l.packParams(p, ps.Params, overrides); err != nil {
		return nil, err
	}
	if ps.Detect != nil {
		var ds detectSpec
		if err := l.decode(ps.Detect, &ds, "detect: "); err != nil {
			return nil, err
		}
		for _, db := range ds.DBs {
			if db < 0 || db > maxDB {
				return nil, l.errAt(fieldLine(ps.Detect, "dbs"), "detect: db %d out of range 0..%d", db, maxDB)
			}
		}
		p.Detect = Detect{DBs: ds.DBs, Keys: ds.Keys}
	}
	seq, ok := ps.Families.(*ast.SequenceNode)
	if !ok || len(seq.Values) == 0 {
		return nil, l.errAt(fieldLine(body, "families"), "families: want a non-empty list of key families")
	}
	refs := map[*Family]ast.Node{}
	for i, n := range seq.Values {
		f, err := l.family(p, n, i)
		if err != nil {
			return nil, err
		}
		refs[f] = field(n, "params")
		p.Families = append(p.Families, f)
		p.byID[f.ID] = f
	}
	if err := l.crossCheck(p, refs); err != nil {
		return nil, err
	}
	return p, nil
}

func (l *loader) packParams(p *Pack, n ast.Node, overrides map[string]string) error {
	l.values = map[string]string{}
	if n != nil {
		m, ok := n.(*ast.MappingNode)
		if !ok {
			if mv, single := n.(*ast.MappingValueNode); single {
				m = &ast.MappingNode{Values: []*ast.MappingValueNode{mv}}
			} else {
				return l.errAt(line(n), "params: want a mapping of parameter name to {default, description}")
			}
		}
		for _, mv := range m.Values {
			name := mv.Key.GetToken().Value
			if !validName(name) {
				return l.errAt(line(mv.Key), "params: bad name %q: use letters, digits and _", name)
			}
			var ps paramSpec
			if err := l.decode(mv.Value, &ps, "params: "+name+": "); err != nil {
				return err
			}
			def := ""
			if ps.Default != nil {
				def = fmt.Sprint(ps.Default)
			}
			if def == "" || strings.ContainsAny(def, "\r\n") {
				return l.errAt(line(mv.Value), "params: %s: default is required, on one line", name)
			}
			p.Params = append(p.Params, PackParam{Name: name, Default: def, Value: def, Description: ps.Description})
			l.values[name] = def
		}
	}
	for i := range p.Params {
		if v, ok := overrides[p.Params[i].Name]; ok {
			if v == "" || strings.ContainsAny(v, "\r\n") {
				return l.errAt(0, "parameter %s: value must be non-empty, on one line", p.Params[i].Name)
			}
			p.Params[i].Value = v
			l.values[p.Params[i].Name] = v
		}
	}
	p.values = l.values
	return nil
}

func (l *loader) family(p *Pack, n ast.Node, i int) (*Family, error) {
	prefix := fmt.Sprintf("family #%d: ", i+1)
	if id := field(n, "id"); id != nil && id.GetToken() != nil {
		prefix = fmt.Sprintf("family %q: ", id.GetToken().Value)
	}
	var fs familySpec
	if _, ok := n.(*ast.MappingNode); !ok {
		if _, ok := n.(*ast.MappingValueNode); !ok {
			return nil, l.errAt(line(n), "%swant a mapping with id, db, pattern, type, ttl, domain, role", prefix)
		}
	}
	if err := l.decode(n, &fs, prefix); err != nil {
		return nil, err
	}
	fail := func(key, format string, args ...any) (*Family, error) {
		return nil, l.errAt(fieldLine(n, key), "%s%s", prefix, fmt.Sprintf(format, args...))
	}
	f := &Family{ID: fs.ID, Title: strings.TrimSpace(fs.Title), Type: fs.Type, Domain: fs.Domain, Role: Role(fs.Role),
		Sensitive: fs.Sensitive, Danger: strings.TrimSpace(fs.Danger), Description: fs.Description, Line: line(n), index: i}
	if !familyIDRE.MatchString(fs.ID) {
		return fail("id", "id %q: want 1-64 lower-case letters, digits, '.', '-' or '_'", fs.ID)
	}
	if prev := p.byID[fs.ID]; prev != nil {
		return fail("id", "duplicate id (first declared at line %d)", prev.Line)
	}
	dbs, err := l.dbs(fs.DB, prefix)
	if err != nil {
		return nil, err
	}
	f.DBs = dbs
	if fs.Pattern == "" {
		return fail("pattern", "pattern is required")
	}
	if f.Pattern, err = parsePattern(fs.Pattern, l.values); err != nil {
		return fail("pattern", "pattern %q: %v", fs.Pattern, err)
	}
	switch {
	case fs.Type == "bitmap":
		return fail("type", "type bitmap: Redis stores a bitmap as a string; write type: string")
	case !slices.Contains(redisTypes, fs.Type):
		return fail("type", "type %q: want one of %s", fs.Type, strings.Join(redisTypes, ", "))
	}
	if f.TTL, err = l.ttl(fs.TTL, n, prefix); err != nil {
		return nil, err
	}
	if strings.TrimSpace(fs.Domain) == "" {
		return fail("domain", "domain is required (e.g. \"Slider CAPTCHA\")")
	}
	if err := l.familyRole(f, &fs, n, prefix); err != nil {
		return nil, err
	}
	return f, nil
}

// familyRole checks the family's role against its type and reads the
// role's params, substituted and validated, into f.
func (l *loader) familyRole(f *Family, fs *familySpec, n ast.Node, prefix string) error {
	fail := func(key, format string, args ...any) error {
		return l.errAt(fieldLine(n, key), "%s%s", prefix, fmt.Sprintf(format, args...))
	}
	info, ok := roles[f.Role]
	if !ok {
		names := make([]string, 0, len(roles))
		for _, r := range Roles() {
			names = append(names, string(r))
		}
		if fs.Role == "" {
			return fail("role", "role is required (known: %s)", strings.Join(names, ", "))
		}
		return fail("role", "unknown role %q (known: %s)", fs.Role, strings.Join(names, ", "))
	}
	if info.types != nil && !slices.Contains(info.types, f.Type) {
		return fail("type", "role %s needs type %s, not %s", f.Role, strings.Join(info.types, " or "), f.Type)
	}
	if f.Role == RoleSecret || f.Role == RoleVerificationCode {
		f.Sensitive = true
	}
	switch {
	case info.params == nil && fs.Params != nil:
		return fail("params", "role %s takes no params", f.Role)
	case info.params != nil:
		params := info.params()
		if fs.Params != nil {
			if err := l.substitute(fs.Params, prefix+"params: "); err != nil {
				return err
			}
			if err := l.decode(fs.Params, params, prefix+"params: "); err != nil {
				return err
			}
		}
		if err := checkParams(f, params); err != nil {
			return fail("params", "params: %v", err)
		}
		f.Params = params
	}
	return nil
}

func (l *loader) dbs(n ast.Node, prefix string) ([]int, error) {
	if n == nil {
		return nil, nil
	}
	bad := l.errAt(line(n), "%sdb: want a database number 0..%d or a list of them (omit db for any database)", prefix, maxDB)
	var v any
	if err := yaml.NodeToValue(n, &v); err != nil {
		return nil, bad
	}
	one := func(x any) (int, bool) {
		switch x := x.(type) {
		case uint64:
			return int(x), x <= maxDB
		case int64:
			return int(x), x >= 0 && x <= maxDB
		}
		return 0, false
	}
	if db, ok := one(v); ok {
		return []int{db}, nil
	}
	list, ok := v.([]any)
	if !ok || len(list) == 0 {
		return nil, bad
	}
	out := make([]int, 0, len(list))
	for _, x := range list {
		db, ok := one(x)
		if !ok {
			return nil, bad
		}
		if slices.Contains(out, db) {
			return nil, l.errAt(line(n), "%sdb %d listed twice", prefix, db)
		}
		out = append(out, db)
	}
	slices.Sort(out)
	return out, nil
}

func (l *loader) ttl(n, fam ast.Node, prefix string) (TTLPolicy, error) {
	const want = "ttl: want required, none, any, or a range {min: 1s, max: 5m}"
	if n == nil {
		return TTLPolicy{}, l.errAt(line(fam), "%sttl is required (%s)", prefix, strings.TrimPrefix(want, "ttl: want "))
	}
	if s, ok := n.(*ast.StringNode); ok {
		switch s.Value {
		case "required":
			return TTLPolicy{Kind: TTLRequired}, nil
		case "none":
			return TTLPolicy{Kind: TTLNone}, nil
		case "any":
			return TTLPolicy{Kind: TTLAny}, nil
		}
		return TTLPolicy{}, l.errAt(line(n), "%s%s, not %q", prefix, want, s.Value)
	}
	switch n.(type) {
	case *ast.MappingNode, *ast.MappingValueNode:
	default:
		return TTLPolicy{}, l.errAt(line(n), "%s%s", prefix, want)
	}
	if err := l.substitute(n, prefix+"ttl: "); err != nil {
		return TTLPolicy{}, err
	}
	var ts ttlSpec
	if err := l.decode(n, &ts, prefix+"ttl: "); err != nil {
		return TTLPolicy{}, err
	}
	switch {
	case ts.Min < 0 || ts.Max < 0:
		return TTLPolicy{}, l.errAt(line(n), "%sttl: negative bound", prefix)
	case ts.Max > 0 && ts.Min > ts.Max:
		return TTLPolicy{}, l.errAt(line(n), "%sttl: min %s is above max %s", prefix, formatDuration(ts.Min), formatDuration(ts.Max))
	}
	return TTLPolicy{Kind: TTLRequired, Min: ts.Min, Max: ts.Max}, nil
}
