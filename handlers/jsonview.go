package handlers

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/keydeck/keydeck/internal/route"
)

// A page asked for JSON answers its API twin's answer (pageJSON). Until
// every page has one, a page the route table marks LegacyJSON still
// answers its view model (viewJSON) — a migration, not a format: those
// pages' tests still read view-model names; each moves to its twin.

// wantsJSON reports a request that prefers JSON to HTML: application/json
// is accepted with a higher quality than text/html, or as high and listed
// first. Browsers and htmx never send it.
func wantsJSON(r *http.Request) bool {
	jsonQ, htmlQ := -1.0, -1.0
	jsonAt, htmlAt := -1, -1
	for i, part := range strings.Split(r.Header.Get("Accept"), ",") {
		mt, params, _ := strings.Cut(part, ";")
		q := 1.0
		for _, p := range strings.Split(params, ";") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(p), "q="); ok {
				if f, err := strconv.ParseFloat(v, 64); err == nil {
					q = f
				}
			}
		}
		switch strings.ToLower(strings.TrimSpace(mt)) {
		case "application/json":
			if q > jsonQ {
				jsonQ, jsonAt = q, i
			}
		case "text/html":
			if q > htmlQ {
				htmlQ, htmlAt = q, i
			}
		}
	}
	return jsonQ > 0 && (jsonQ > htmlQ || jsonQ == htmlQ && jsonAt < htmlAt)
}

// viewJSON encodes a view model. Field names are the view model's (see
// views/page_*.templ), in its order. Every string is valid UTF-8, as JSON
// must be: one that is not — a Redis name can be any bytes — is carried
// as {"b64": "<its bytes, base64>"}, the form the audit log uses; one
// longer than route.MaxLinkedName (4 KiB: only a name can be) is cut to
// that many bytes and carried as {"b64": …, "bytes": <its full length>},
// as pages cut it and do not link it. encoding/json would replace the
// invalid bytes with U+FFFD instead, which turns two keys into one.
func viewJSON(v any) ([]byte, error) {
	return appendJSON(nil, reflect.ValueOf(v))
}

func appendJSON(b []byte, v reflect.Value) ([]byte, error) {
	if !v.IsValid() {
		return append(b, "null"...), nil
	}
	if m, ok := v.Interface().(json.Marshaler); ok && (v.Kind() != reflect.Pointer || !v.IsNil()) {
		out, err := m.MarshalJSON()
		return append(b, out...), err
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return append(b, "null"...), nil
		}
		return appendJSON(b, v.Elem())
	case reflect.String:
		return appendName(b, v.String()), nil
	case reflect.Bool:
		return strconv.AppendBool(b, v.Bool()), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.AppendInt(b, v.Int(), 10), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.AppendUint(b, v.Uint(), 10), nil
	case reflect.Float32, reflect.Float64:
		f := v.Float()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return append(b, "null"...), nil
		}
		return strconv.AppendFloat(b, f, 'g', -1, 64), nil
	case reflect.Slice, reflect.Array:
		return appendList(b, v)
	case reflect.Map:
		return appendMap(b, v)
	case reflect.Struct:
		return appendStruct(b, v)
	}
	return b, fmt.Errorf("view JSON: cannot encode %s", v.Type())
}

// appendList writes a slice or array; a nil list is an empty one: scripts
// range over it.
func appendList(b []byte, v reflect.Value) ([]byte, error) {
	b = append(b, '[')
	for i := range v.Len() {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = appendJSON(b, v.Index(i)); err != nil {
			return b, err
		}
	}
	return append(b, ']'), nil
}

// appendMap writes a map of string keys, in key order.
func appendMap(b []byte, v reflect.Value) ([]byte, error) {
	if v.Type().Key().Kind() != reflect.String {
		return b, fmt.Errorf("view JSON: map key %s", v.Type().Key())
	}
	keys := v.MapKeys()
	slices.SortFunc(keys, func(x, y reflect.Value) int { return strings.Compare(x.String(), y.String()) })
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendQuoted(b, validKey(k.String()))
		b = append(b, ':')
		var err error
		if b, err = appendJSON(b, v.MapIndex(k)); err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
}

// appendStruct writes a struct's exported fields in their order, named by
// their json tag or else their Go name.
func appendStruct(b []byte, v reflect.Value) ([]byte, error) {
	b = append(b, '{')
	first := true
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = appendQuoted(b, name)
		b = append(b, ':')
		var err error
		if b, err = appendJSON(b, v.Field(i)); err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
}

// appendName writes s as a JSON string, or as {"b64": …} (see viewJSON).
func appendName(b []byte, s string) []byte {
	if utf8.ValidString(s) && len(s) <= route.MaxLinkedName {
		return appendQuoted(b, s)
	}
	shown := s
	if len(s) > route.MaxLinkedName {
		shown = s[:route.MaxLinkedName]
	}
	b = append(b, `{"b64":"`...)
	b = base64.StdEncoding.AppendEncode(b, []byte(shown))
	b = append(b, '"')
	if len(shown) < len(s) {
		b = append(b, `,"bytes":`...)
		b = strconv.AppendInt(b, int64(len(s)), 10)
	}
	return append(b, '}')
}

// appendQuoted writes a valid UTF-8 string the way encoding/json does
// (with <, > and & escaped, so no markup survives).
func appendQuoted(b []byte, s string) []byte {
	out, _ := json.Marshal(s)
	return append(b, out...)
}

// validKey makes an object key valid UTF-8; keys are Keydeck's own words,
// so this is a net, not a format.
func validKey(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
