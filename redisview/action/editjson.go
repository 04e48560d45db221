package action

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// The values of create-key (an aggregate) and add-stream-entry are JSON
// text. encoding/json replaces invalid UTF-8 (and a lone surrogate escape
// such as "\udcff") with U+FFFD instead of failing, which would write
// other bytes than the operator sent: such text is refused, and bytes that
// are not text are written as {"b64": "…"} (standard or URL-safe base64,
// padded or not) in place of any string: a list's element, a set's or
// sorted set's member, a hash's or stream's field or value. A field or
// member is a JSON object's name, which can only be a string: a value
// with such names is written as an array of pairs instead of an object
// ([[{"b64": "/w=="}, "v"]]). Errors name an element by its position,
// never by its bytes, which may be a sensitive key's data.

// jsonHelp says how bytes that are not text are written.
const jsonHelp = `any string may be {"b64": "…"} for bytes that are not text`

// jsonText refuses a JSON value too long or not valid UTF-8.
func jsonText(raw, what string) error {
	if len(raw) > MaxEditBytes {
		return invalidf("%s is longer than 1 MiB", what)
	}
	if !utf8.ValidString(raw) {
		return invalidf(`%s is not valid UTF-8, which JSON text must be: write bytes that are not text as {"b64": "…"}`, what)
	}
	return nil
}

// exactJSON reads one string of a JSON value: a JSON string, or
// {"b64": "…"} for bytes. ok is false for anything else.
func exactJSON(m json.RawMessage) (string, bool) {
	m = bytes.TrimSpace(m)
	if len(m) > 0 && m[0] == '{' {
		var e struct {
			B64 *string `json:"b64"`
		}
		dec := json.NewDecoder(bytes.NewReader(m))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil || e.B64 == nil {
			return "", false
		}
		return decodeB64(*e.B64)
	}
	var s string
	if err := json.Unmarshal(m, &s); err != nil {
		return "", false
	}
	if strings.ContainsRune(s, utf8.RuneError) && !bytes.Contains(m, []byte("\uFFFD")) && !bytes.Contains(bytes.ToLower(m), []byte(`\ufffd`)) {
		return "", false // a lone surrogate escape, replaced by encoding/json
	}
	return s, true
}

// decodeB64 takes standard or URL-safe base64, padded or not.
func decodeB64(s string) (string, bool) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return string(b), true
		}
	}
	return "", false
}

// parseStrings reads a list's or set's JSON array of strings.
func parseStrings(raw, what string) ([]string, error) {
	if err := jsonText(raw, what); err != nil {
		return nil, err
	}
	bad := func(why string, a ...any) error {
		return invalidf(`%s must be a JSON array of strings with at least one, such as ["a", "b"] (%s): %s`, what, jsonHelp, fmt.Sprintf(why, a...))
	}
	var ms []json.RawMessage
	dec := json.NewDecoder(strings.NewReader(raw))
	if err := dec.Decode(&ms); err != nil {
		return nil, bad("it is not a JSON array")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, bad("there is more after the array")
	}
	if len(ms) == 0 {
		return nil, bad("it is empty")
	}
	out := make([]string, len(ms))
	for i, m := range ms {
		s, ok := exactJSON(m)
		if !ok {
			return nil, bad("element %d is not a string or {\"b64\": \"…\"}", i+1)
		}
		out[i] = s
	}
	return out, nil
}

// parsePairs reads a JSON object of name → value, in order, or an array
// of [name, value] pairs; the value is a string, or with scores a number
// (a sorted set's). A name given twice is refused (which one was meant
// cannot be told).
func parsePairs(raw, what string, scores bool) ([][2]string, error) {
	if err := jsonText(raw, what); err != nil {
		return nil, err
	}
	want := `a JSON object of strings, such as {"name": "value"}, or an array of pairs, such as [["name", "value"]]`
	if scores {
		want = `a JSON object of member → score, such as {"ann": 12.5}, or an array of pairs, such as [["ann", 12.5]]`
	}
	bad := func(why string, a ...any) error {
		return invalidf("%s must be %s (%s): %s", what, want, jsonHelp, fmt.Sprintf(why, a...))
	}
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	open, err := dec.Token()
	if err != nil || (open != json.Delim('{') && open != json.Delim('[')) {
		return nil, bad("it does not start with { or [")
	}
	var out [][2]string
	seen := map[string]bool{}
	for dec.More() {
		n := len(out) + 1
		var name string
		var second json.RawMessage
		if open == json.Delim('{') {
			t, err := dec.Token()
			if err != nil {
				return nil, bad("it is not JSON")
			}
			name = t.(string) // a name of an object is always a string
			if err := dec.Decode(&second); err != nil {
				return nil, bad("it is not JSON")
			}
		} else {
			var pair []json.RawMessage
			if err := dec.Decode(&pair); err != nil || len(pair) != 2 {
				return nil, bad("entry %d is not a pair [name, value]", n)
			}
			var ok bool
			if name, ok = exactJSON(pair[0]); !ok {
				return nil, bad("the name of entry %d is not a string or {\"b64\": \"…\"}", n)
			}
			second = pair[1]
		}
		v, ok := pairValue(second, scores)
		if !ok {
			return nil, bad("the value of entry %d is not a %s", n, map[bool]string{false: `string or {"b64": "…"}`, true: "number"}[scores])
		}
		if seen[name] {
			return nil, bad("entry %d is given twice (its name is an earlier one's)", n)
		}
		seen[name] = true
		out = append(out, [2]string{name, v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, bad("it is not JSON")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, bad("there is more after it")
	}
	if len(out) == 0 {
		return nil, bad("it is empty")
	}
	return out, nil
}

// pairValue reads a pair's value: a string or {"b64"}, or a number.
func pairValue(m json.RawMessage, scores bool) (string, bool) {
	if !scores {
		return exactJSON(m)
	}
	var n json.Number
	if err := json.Unmarshal(m, &n); err != nil {
		return "", false
	}
	return n.String(), true
}
