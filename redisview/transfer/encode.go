package transfer

import (
	"encoding/base64"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"
)

// AppendLine appends r's line (no newline) to buf. It writes the JSON
// itself: encoding/json compacts again the output of every MarshalJSON
// of a nested value, which made export spend most of its time there.
// The output is what MarshalJSON documents (it calls this).
func AppendLine(buf []byte, r Record) ([]byte, error) {
	buf = append(buf, `{"key":`...)
	buf = appendBytes(buf, r.Key)
	buf = append(buf, `,"type":`...)
	buf = appendString(buf, r.Type)
	if r.TTL > 0 {
		buf = strconv.AppendInt(append(buf, `,"ttl_ms":`...), r.TTL, 10)
	} else {
		buf = append(buf, `,"ttl_ms":null`...)
	}
	switch {
	case r.Withheld != "":
		buf = append(buf, `,"sensitive":true,"withheld":`...)
		buf = appendString(buf, r.Withheld)
	case r.Skipped != "":
		buf = append(buf, `,"skipped":`...)
		buf = appendString(buf, r.Skipped)
	default:
		var err error
		if buf, err = appendValue(append(buf, `,"value":`...), r); err != nil {
			return nil, err
		}
	}
	return append(buf, '}'), nil
}

func appendValue(buf []byte, r Record) ([]byte, error) {
	switch r.Type {
	case TypeString:
		return appendBytes(buf, r.String), nil
	case TypeHash:
		return appendPairs(buf, r.Pairs), nil
	case TypeList, TypeSet:
		buf = append(buf, '[')
		for i, it := range r.Items {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = appendBytes(buf, it)
		}
		return append(buf, ']'), nil
	case TypeZSet:
		buf = append(buf, '[')
		for i, z := range r.Scored {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = appendScore(appendBytes(append(buf, '['), z.Member), z.Score)
			buf = append(buf, ']')
		}
		return append(buf, ']'), nil
	case TypeStream:
		return appendStream(buf, r.Stream), nil
	}
	return nil, fmt.Errorf("type %q is not one export writes", r.Type)
}

func appendPairs(buf []byte, ps []Pair) []byte {
	buf = append(buf, '[')
	for i, p := range ps {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = appendBytes(append(buf, '['), p.Field)
		buf = appendBytes(append(buf, ','), p.Value)
		buf = append(buf, ']')
	}
	return append(buf, ']')
}

func appendStream(buf []byte, s *Stream) []byte {
	buf = append(buf, `{"entries":[`...)
	if s == nil {
		return append(buf, "]}"...)
	}
	for i, e := range s.Entries {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = appendString(append(buf, `{"id":`...), e.ID)
		buf = appendPairs(append(buf, `,"fields":`...), e.Fields)
		buf = append(buf, '}')
	}
	buf = append(buf, ']')
	if s.LastID != "" {
		buf = appendString(append(buf, `,"last_id":`...), s.LastID)
	}
	return append(buf, '}')
}

// appendScore writes a score as encoding/json writes a float64 (the
// shortest form that reads back the same), or "inf" / "-inf".
func appendScore(buf []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(buf, `,"inf"`...)
	case math.IsInf(f, -1):
		return append(buf, `,"-inf"`...)
	}
	buf = append(buf, ',')
	abs := math.Abs(f)
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		return strconv.AppendFloat(buf, f, 'e', -1, 64)
	}
	return strconv.AppendFloat(buf, f, 'f', -1, 64)
}

// appendBytes writes bytes as text when they are valid UTF-8, else as
// {"b64": …}.
func appendBytes(buf []byte, b Bytes) []byte {
	if utf8.ValidString(string(b)) {
		return appendString(buf, string(b))
	}
	buf = append(buf, `{"b64":"`...)
	buf = base64.StdEncoding.AppendEncode(buf, []byte(b))
	return append(buf, `"}`...)
}

const hexDigits = "0123456789abcdef"

// appendString writes valid UTF-8 as a JSON string: quotes, backslashes
// and control characters escaped; <, > and & escaped as encoding/json
// does, so that a line is safe to embed in HTML.
func appendString(buf []byte, s string) []byte {
	buf = append(buf, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
			continue
		}
		buf = append(buf, s[start:i]...)
		switch c {
		case '"', '\\':
			buf = append(buf, '\\', c)
		case '\n':
			buf = append(buf, '\\', 'n')
		case '\r':
			buf = append(buf, '\\', 'r')
		case '\t':
			buf = append(buf, '\\', 't')
		default:
			buf = append(buf, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
		}
		start = i + 1
	}
	buf = append(buf, s[start:]...)
	return append(buf, '"')
}
