package apiv1

import (
	"math"
	"reflect"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/danielgtaylor/huma/v2"

	"github.com/keydeck/keydeck/redisview/schema"
)

var (
	durationType = reflect.TypeFor[time.Duration]()
	timeType     = reflect.TypeFor[time.Time]()
)

// StateOf is a role's decoded state (a *decode.TokenBucket …) in the
// API's conventions: exported fields snake_case, a time.Duration as
// integer milliseconds named …_ms, a time.Time as RFC 3339 UTC (left out
// when zero), every string a Name (byte-exact), NaN and infinities left
// out. Roles keep their own fields; the conventions are one.
func StateOf(state any) map[string]any {
	v := reflect.ValueOf(state)
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return nil
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return nil
	}
	return structState(v)
}

func structState(v reflect.Value) map[string]any {
	out := map[string]any{}
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name := snake(f.Name)
		if f.Type == durationType {
			name += "_ms"
		}
		if x, ok := stateValue(v.Field(i)); ok {
			out[name] = x
		}
	}
	return out
}

// stateValue converts one field; ok false leaves it out.
func stateValue(v reflect.Value) (any, bool) {
	switch {
	case v.Type() == durationType:
		return Millis(time.Duration(v.Int())), true
	case v.Type() == timeType:
		t := v.Interface().(time.Time)
		return Time(t), !t.IsZero()
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil, false
		}
		return stateValue(v.Elem())
	case reflect.String:
		return Name(v.String()), true
	case reflect.Bool:
		return v.Bool(), true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int(), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return v.Uint(), true
	case reflect.Float32, reflect.Float64:
		f := v.Float()
		return f, !math.IsNaN(f) && !math.IsInf(f, 0)
	case reflect.Struct:
		return structState(v), true
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 {
			return Name(v.Bytes()), true
		}
		list := make([]any, 0, v.Len())
		for i := range v.Len() {
			if x, ok := stateValue(v.Index(i)); ok {
				list = append(list, x)
			}
		}
		return list, true
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String {
			return nil, false
		}
		m := map[string]any{}
		for _, k := range v.MapKeys() {
			if x, ok := stateValue(v.MapIndex(k)); ok {
				m[k.String()] = x
			}
		}
		return m, true
	}
	return nil, false
}

// snake is a Go field name in snake_case: RefillPerS → refill_per_s,
// TTL → ttl, LastRefillMs → last_refill_ms.
func snake(s string) string {
	rs := []rune(s)
	var b strings.Builder
	for i, r := range rs {
		if unicode.IsUpper(r) {
			prevLower := i > 0 && !unicode.IsUpper(rs[i-1])
			nextLower := i > 0 && i+1 < len(rs) && unicode.IsLower(rs[i+1]) && unicode.IsUpper(rs[i-1])
			if prevLower || nextLower {
				b.WriteByte('_')
			}
			b.WriteRune(unicode.ToLower(r))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// stateTypes is each role's decoded state type (its reader answers a
// pointer to one), registered by the role's file, state_<role>.go.
var stateTypes = map[schema.Role]reflect.Type{}

// registerState registers T as role r's decoded state: the contract
// documents StateOf's answer for a T as the role's state schema
// (stateSchema), and DecodedOf answers a state of another type as an
// error, never as a state the contract does not describe.
func registerState[T any](r schema.Role) {
	if _, dup := stateTypes[r]; dup {
		panic("apiv1: state of role " + string(r) + " registered twice")
	}
	stateTypes[r] = reflect.TypeFor[T]()
}

// stateIs reports whether state is a role r's registered state type (or
// a pointer to one).
func stateIs(r schema.Role, state any) bool {
	t, ok := stateTypes[r]
	if !ok {
		return false
	}
	st := reflect.TypeOf(state)
	for st != nil && st.Kind() == reflect.Pointer {
		st = st.Elem()
	}
	return st == t
}

// stateSchema is the JSON Schema of StateOf's answer for a struct of type
// t: the same rules, field by field (a field StateOf may leave out is
// not required).
func stateSchema(reg huma.Registry, t reflect.Type) *huma.Schema {
	s := &huma.Schema{Type: huma.TypeObject, AdditionalProperties: false, Properties: map[string]*huma.Schema{}}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name := snake(f.Name)
		if f.Type == durationType {
			name += "_ms"
		}
		fs, always := fieldSchema(reg, f.Type)
		if fs == nil {
			continue
		}
		s.Properties[name] = fs
		if always {
			s.Required = append(s.Required, name)
		}
	}
	slices.Sort(s.Required)
	return s
}

// fieldSchema is stateValue's answer's schema for a value of type t, and
// whether stateValue always answers one (else the field may be left out).
func fieldSchema(reg huma.Registry, t reflect.Type) (*huma.Schema, bool) {
	switch t {
	case durationType:
		return &huma.Schema{Type: huma.TypeInteger, Description: "Milliseconds; -1: none."}, true
	case timeType:
		return &huma.Schema{Type: huma.TypeString, Format: "date-time"}, false
	}
	switch t.Kind() {
	case reflect.Pointer:
		s, _ := fieldSchema(reg, t.Elem())
		return s, false
	case reflect.Interface:
		return &huma.Schema{}, false
	case reflect.String:
		return reg.Schema(reflect.TypeFor[Name](), true, ""), true
	case reflect.Bool:
		return &huma.Schema{Type: huma.TypeBoolean}, true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return &huma.Schema{Type: huma.TypeInteger}, true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		zero := 0.0
		return &huma.Schema{Type: huma.TypeInteger, Minimum: &zero}, true
	case reflect.Float32, reflect.Float64:
		// NaN and infinities are left out.
		return &huma.Schema{Type: huma.TypeNumber}, false
	case reflect.Struct:
		return stateSchema(reg, t), true
	case reflect.Slice, reflect.Array:
		if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 {
			return reg.Schema(reflect.TypeFor[Name](), true, ""), true
		}
		items, _ := fieldSchema(reg, t.Elem())
		if items == nil {
			items = &huma.Schema{}
		}
		return &huma.Schema{Type: huma.TypeArray, Items: items}, true
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return nil, false
		}
		vals, _ := fieldSchema(reg, t.Elem())
		if vals == nil {
			vals = &huma.Schema{}
		}
		return &huma.Schema{Type: huma.TypeObject, AdditionalProperties: vals}, true
	}
	return nil, false
}

// pascal is a role's name as a schema name's part: token-bucket →
// TokenBucket.
func pascal(r schema.Role) string {
	var b strings.Builder
	for _, part := range strings.FieldsFunc(string(r), func(c rune) bool { return c == '-' || c == '_' }) {
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}

// Schema describes Decoded in the OpenAPI document: one variant per role
// with a registered state (DecodedTokenBucket …, its state StateTokenBucket
// …), discriminated by role, and DecodedWithheld for a sensitive key of a
// role without one.
func (Decoded) Schema(reg huma.Registry) *huma.Schema {
	const prefix = "#/components/schemas/"
	roles := make([]schema.Role, 0, len(stateTypes))
	for r := range stateTypes {
		roles = append(roles, r)
	}
	slices.Sort(roles)
	common := func(role *huma.Schema) map[string]*huma.Schema {
		return map[string]*huma.Schema{
			"role":     role,
			"withheld": {Type: huma.TypeBoolean, Description: "The family is sensitive: not read."},
			"note":     {Type: huma.TypeString, Description: "Why it was not decoded, or what is odd about the value."},
			"error":    {Type: huma.TypeString, Description: "The read failed: the state is unknown."},
		}
	}
	out := &huma.Schema{
		Description:   "What a role makes of a key: its state, typed per role (the variant its role names).",
		Discriminator: &huma.Discriminator{PropertyName: "role", Mapping: map[string]string{}},
	}
	known := make([]any, len(roles))
	for i, r := range roles {
		known[i] = string(r)
		stateName, name := "State"+pascal(r), "Decoded"+pascal(r)
		st := stateSchema(reg, stateTypes[r])
		st.Description = "The " + string(r) + " role's state: snake_case fields, durations as integer …_ms, times RFC 3339 UTC, names as Name."
		st.PrecomputeMessages()
		reg.Map()[stateName] = st
		props := common(&huma.Schema{Type: huma.TypeString, Enum: []any{string(r)}})
		props["state"] = &huma.Schema{Ref: prefix + stateName}
		v := &huma.Schema{Type: huma.TypeObject, AdditionalProperties: false, Required: []string{"role", "withheld"}, Properties: props}
		// huma validates with what PrecomputeMessages prepares (property
		// names, messages); a schema it did not make from a type needs it.
		v.PrecomputeMessages()
		reg.Map()[name] = v
		out.OneOf = append(out.OneOf, &huma.Schema{Ref: prefix + name})
		out.Discriminator.Mapping[string(r)] = prefix + name
	}
	withheld := &huma.Schema{
		Type: huma.TypeObject, AdditionalProperties: false, Required: []string{"role", "withheld"},
		Description: "A sensitive key of a role that has no reader: withheld.",
		Properties: map[string]*huma.Schema{
			"role":     {Type: huma.TypeString, Not: &huma.Schema{Enum: known}},
			"withheld": {Type: huma.TypeBoolean, Enum: []any{true}},
		},
	}
	withheld.PrecomputeMessages()
	reg.Map()["DecodedWithheld"] = withheld
	out.OneOf = append(out.OneOf, &huma.Schema{Ref: prefix + "DecodedWithheld"})
	return out
}
