package action

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"unicode/utf8"
)

// exact is a string that crosses JSON byte for byte. Key names, members
// and fields are bytes: encoding/json replaces invalid UTF-8 with U+FFFD,
// so "conf:\xff" and "conf:\uFFFD" would come back as the same name and a
// confirmation or an undo could act on a key other than the one shown.
// Valid UTF-8 is written as a plain JSON string (records stay readable);
// anything else as {"b64": "<standard base64>"}, which no JSON string can
// be mistaken for.
type exact string

type exactB64 struct {
	B64 string `json:"b64"`
}

func (s exact) MarshalJSON() ([]byte, error) {
	if utf8.ValidString(string(s)) {
		return json.Marshal(string(s))
	}
	return json.Marshal(exactB64{base64.StdEncoding.EncodeToString([]byte(s))})
}

func (s *exact) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '{' {
		var e exactB64
		if err := json.Unmarshal(b, &e); err != nil {
			return err
		}
		raw, err := base64.StdEncoding.DecodeString(e.B64)
		if err != nil {
			return errors.New("action: bad b64 name")
		}
		*s = exact(raw)
		return nil
	}
	return json.Unmarshal(b, (*string)(s))
}

func exactSlice(ss []string) []exact {
	if ss == nil {
		return nil
	}
	out := make([]exact, len(ss))
	for i, s := range ss {
		out[i] = exact(s)
	}
	return out
}

func stringSlice(es []exact) []string {
	if es == nil {
		return nil
	}
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = string(e)
	}
	return out
}

func exactMap(m map[string]string) map[string]exact {
	if m == nil {
		return nil
	}
	out := make(map[string]exact, len(m))
	for k, v := range m {
		out[k] = exact(v)
	}
	return out
}

func stringMap(m map[string]exact) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = string(v)
	}
	return out
}

// MarshalJSON keeps the key and member byte-exact (see exact).
func (t Target) MarshalJSON() ([]byte, error) {
	type plain Target
	return json.Marshal(struct {
		plain
		Key exact `json:"key"`
	}{plain(t), exact(t.Key)})
}

func (t *Target) UnmarshalJSON(b []byte) error {
	type plain Target
	var w struct {
		plain
		Key exact `json:"key"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*t = Target(w.plain)
	t.Key = string(w.Key)
	return nil
}

// MarshalJSON keeps the member or field and a field's value byte-exact.
func (m MemberState) MarshalJSON() ([]byte, error) {
	type plain MemberState
	return json.Marshal(struct {
		plain
		Name  exact `json:"name"`
		Value exact `json:"value,omitempty"`
	}{plain(m), exact(m.Name), exact(m.Value)})
}

func (m *MemberState) UnmarshalJSON(b []byte) error {
	type plain MemberState
	var w struct {
		plain
		Name  exact `json:"name"`
		Value exact `json:"value"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*m = MemberState(w.plain)
	m.Name, m.Value = string(w.Name), string(w.Value)
	return nil
}
