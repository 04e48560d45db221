package apiv1

import (
	"math"
	"reflect"
	"strings"
	"time"
	"unicode"
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
