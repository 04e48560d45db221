package transfer

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Bytes is a name or value carried byte-exact: in JSON, a string when it
// is valid UTF-8, else {"b64": "…"} (standard base64, padded). Reading
// accepts standard and URL-safe base64, padded or not, so a file edited
// by hand or by another tool still reads.
type Bytes string

// b64 is the JSON form of bytes that are not valid UTF-8.
type b64 struct {
	B64 *string `json:"b64"`
}

// MarshalJSON writes text, or {"b64"} for bytes that are not UTF-8 (JSON
// strings cannot carry them: encoders replace them with U+FFFD).
func (b Bytes) MarshalJSON() ([]byte, error) {
	if utf8.ValidString(string(b)) {
		return json.Marshal(string(b))
	}
	return json.Marshal(b64{B64: ptr(base64.StdEncoding.EncodeToString([]byte(b)))})
}

func ptr[T any](v T) *T { return &v }

// UnmarshalJSON reads a string or {"b64": "…"}.
func (b *Bytes) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '"' {
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
		if strings.Count(s, "\uFFFD") > replacements(data) {
			return errors.New(`a lone surrogate escape (\udXXX): write names and values that are not text as {"b64": "…"}`)
		}
		*b = Bytes(s)
		return nil
	}
	if len(data) == 0 || data[0] != '{' {
		return errors.New(`want a string or {"b64": "…"}`)
	}
	var v b64
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil || v.B64 == nil {
		return errors.New(`want a string or {"b64": "…"} (and nothing else in the object)`)
	}
	raw, err := DecodeBase64(*v.B64)
	if err != nil {
		return err
	}
	*b = Bytes(raw)
	return nil
}

// replacements counts the U+FFFD a JSON string spells out (the
// character or its escape): any more in its decoding come from escapes
// of lone surrogates, which the decoder replaced.
func replacements(data []byte) int {
	return bytes.Count(data, []byte("\uFFFD")) + bytes.Count(bytes.ToLower(data), []byte(`\ufffd`))
}

// DecodeBase64 reads standard or URL-safe base64, padded or not.
func DecodeBase64(s string) ([]byte, error) {
	s = strings.TrimRight(s, "=")
	enc := base64.RawStdEncoding
	if strings.ContainsAny(s, "-_") {
		enc = base64.RawURLEncoding
	}
	raw, err := enc.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("b64: not base64 (standard or URL-safe): %v", err)
	}
	return raw, nil
}
