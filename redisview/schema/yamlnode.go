package schema

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
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
