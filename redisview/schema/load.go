package schema

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
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

// valueError comes from a custom unmarshaler, which sees bytes but no
// position; text lets the loader find the offending scalar again.
type valueError struct {
	text string
	msg  string
}

func (e *valueError) Error() string { return e.msg }

func unquote(b []byte) string {
	var s string
	if err := yaml.Unmarshal(b, &s); err != nil {
		return strings.TrimSpace(string(b))
	}
	return s
}

var decodeOpts = []yaml.DecodeOption{
	yaml.DisallowUnknownField(),
	yaml.CustomUnmarshaler(func(d *time.Duration, b []byte) error {
		s := unquote(b)
		v, err := parseDuration(s)
		if err != nil {
			return &valueError{text: s, msg: err.Error()}
		}
		*d = v
		return nil
	}),
	yaml.CustomUnmarshaler(func(r *Ref, b []byte) error {
		r.text = unquote(b)
		return nil
	}),
}

type loader struct {
	file   string
	values map[string]string
}

func (l *loader) errAt(line int, format string, args ...any) *LoadError {
	return &LoadError{File: l.file, Line: line, Msg: fmt.Sprintf(format, args...)}
}

func line(n ast.Node) int {
	if n == nil || reflect.ValueOf(n).IsNil() || n.GetToken() == nil || n.GetToken().Position == nil {
		return 0
	}
	return n.GetToken().Position.Line
}

// field returns the value node of key in a mapping, or nil.
func field(n ast.Node, key string) ast.Node {
	var values []*ast.MappingValueNode
	switch m := n.(type) {
	case *ast.MappingNode:
		values = m.Values
	case *ast.MappingValueNode:
		values = []*ast.MappingValueNode{m}
	}
	for _, mv := range values {
		if mv.Key != nil && mv.Key.GetToken() != nil && mv.Key.GetToken().Value == key {
			return mv.Value
		}
	}
	return nil
}

// fieldLine is the line of key's value in n, or of n when key is absent.
func fieldLine(n ast.Node, key string) int {
	if v := field(n, key); line(v) > 0 {
		return line(v)
	}
	return line(n)
}

// decode is NodeToValue with strict options and positioned errors; prefix
// goes before the message ("family \"x\": ").
func (l *loader) decode(n ast.Node, v any, prefix string) error {
	err := yaml.NodeToValue(n, v, decodeOpts...)
	if err == nil {
		return nil
	}
	var ve *valueError
	if errors.As(err, &ve) {
		return l.errAt(findScalar(n, ve.text), "%s%s", prefix, ve.msg)
	}
	var ye yaml.Error
	if !errors.As(err, &ye) {
		return l.errAt(line(n), "%s%v", prefix, err)
	}
	msg := ye.GetMessage()
	var te *yaml.TypeError
	var ue *yaml.UnknownFieldError
	switch {
	case errors.As(err, &te):
		msg = fmt.Sprintf("bad value %q: want %s", te.Token.Value, describeType(te.DstType))
	case errors.As(err, &ue):
		msg += " (known: " + strings.Join(yamlFields(v), ", ") + ")"
	}
	ln := 0
	if tk := ye.GetToken(); tk != nil && tk.Position != nil {
		ln = tk.Position.Line
	}
	return l.errAt(ln, "%s%s", prefix, msg)
}

func describeType(t reflect.Type) string {
	if t == nil {
		return "another type"
	}
	if t == reflect.TypeFor[time.Duration]() {
		return "a duration"
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "text"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct, reflect.Pointer:
		return "a mapping"
	}
	return t.String()
}

func yamlFields(v any) []string {
	t := reflect.TypeOf(v)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var out []string
	for i := range t.NumField() {
		if tag, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); tag != "" && tag != "-" {
			out = append(out, tag)
		}
	}
	return out
}

// findScalar returns the line of the first scalar under n whose text is s,
// or n's own line.
func findScalar(n ast.Node, s string) int {
	found := 0
	ast.Walk(visitFunc(func(c ast.Node) bool {
		if found > 0 {
			return false
		}
		if _, ok := c.(ast.ScalarNode); ok && c.GetToken() != nil && c.GetToken().Value == s {
			found = line(c)
			return false
		}
		return true
	}), n)
	if found == 0 {
		return line(n)
	}
	return found
}

type visitFunc func(ast.Node) bool

func (f visitFunc) Visit(n ast.Node) ast.Visitor {
	if n == nil || !f(n) {
		return nil
	}
	return f
}

// substitute replaces scalars written exactly "${name}" under n by the pack
// parameter's value, typed the way YAML would type it, at the original
// position, so role params and TTLs can follow deployment settings.
func (l *loader) substitute(n ast.Node, prefix string) error {
	var err error
	replace := func(v ast.Node) ast.Node {
		s, ok := v.(*ast.StringNode)
		if !ok || err != nil {
			return v
		}
		m := wholeParam.FindStringSubmatch(s.Value)
		if m == nil {
			return v
		}
		val, ok := l.values[m[1]]
		if !ok {
			err = l.errAt(line(v), "%sunknown pack parameter %q (declared: %s)", prefix, m[1], listOrNone(sortedKeys(l.values)))
			return v
		}
		nn, e := yaml.ValueToNode(typedScalar(val))
		if e != nil {
			err = l.errAt(line(v), "%sparameter %s: %v", prefix, m[1], e)
			return v
		}
		nn.GetToken().Position = s.GetToken().Position
		return nn
	}
	var walk func(ast.Node)
	walk = func(n ast.Node) {
		switch n := n.(type) {
		case *ast.MappingNode:
			for _, mv := range n.Values {
				walk(mv)
			}
		case *ast.MappingValueNode:
			n.Value = replace(n.Value)
			walk(n.Value)
		case *ast.SequenceNode:
			for i, v := range n.Values {
				n.Values[i] = replace(v)
				walk(n.Values[i])
			}
		}
	}
	walk(n)
	return err
}

func typedScalar(s string) any {
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return i
	}
	if decimal.MatchString(s) { // not ParseFloat alone: it also takes "inf" and "nan"
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return f
		}
	}
	if b, err := strconv.ParseBool(s); err == nil && (s == "true" || s == "false") {
		return b
	}
	return s
}

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
	f := &Family{ID: fs.ID, Type: fs.Type, Domain: fs.Domain, Role: Role(fs.Role),
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
				return nil, err
			}
			if err := l.decode(fs.Params, params, prefix+"params: "); err != nil {
				return nil, err
			}
		}
		if err := checkParams(f, params); err != nil {
			return fail("params", "params: %v", err)
		}
		f.Params = params
	}
	return f, nil
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
