package transfer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// The Redis types a line may hold.
const (
	TypeString = "string"
	TypeHash   = "hash"
	TypeList   = "list"
	TypeSet    = "set"
	TypeZSet   = "zset"
	TypeStream = "stream"
)

// Record is one key of an export: one line.
type Record struct {
	Key  Bytes
	Type string
	// TTL is the time left to live in ms when read; 0: no TTL.
	TTL int64

	// The value, by type: String (string), Pairs (hash), Items (list, in
	// order; set), Scored (zset, in rank order), Stream (stream).
	String Bytes
	Pairs  []Pair
	Items  []Bytes
	Scored []Scored
	Stream *Stream

	// Withheld says why the value is not in the line (a sensitive
	// family); Skipped why it could not be (larger than the cap, gone
	// while read). A line with either has no value and imports nothing.
	Withheld string
	Skipped  string
}

// Pair is a hash field and its value, or a stream entry's.
type Pair struct{ Field, Value Bytes }

// Scored is a sorted-set member and its score.
type Scored struct {
	Member Bytes
	Score  float64
}

// Stream is a stream's entries in ID order and, when it differs from the
// last entry's ID (entries were deleted at the end, or there are none),
// the ID the stream last generated, so that IDs keep growing after an
// import as they would have. Consumer groups are not exported.
type Stream struct {
	Entries []Entry
	LastID  string
}

// Entry is one stream entry.
type Entry struct {
	ID     string
	Fields []Pair
}

// HasValue reports whether the line carries a value to import.
func (r *Record) HasValue() bool { return r.Withheld == "" && r.Skipped == "" }

// wire is a line as JSON.
type wire struct {
	Key       *Bytes          `json:"key"`
	Type      string          `json:"type"`
	TTL       *int64          `json:"ttl_ms"`
	Value     json.RawMessage `json:"value,omitempty"`
	Sensitive bool            `json:"sensitive,omitempty"`
	Withheld  string          `json:"withheld,omitempty"`
	Skipped   string          `json:"skipped,omitempty"`
}

type wireEntry struct {
	ID     string `json:"id"`
	Fields []Pair `json:"fields"`
}

type wireStream struct {
	Entries []wireEntry `json:"entries"`
	LastID  string      `json:"last_id,omitempty"`
}

// MarshalJSON writes the line (without its newline).
func (r Record) MarshalJSON() ([]byte, error) { return AppendLine(nil, r) }

// MarshalJSON writes [field, value].
func (p Pair) MarshalJSON() ([]byte, error) { return json.Marshal([2]Bytes{p.Field, p.Value}) }

// UnmarshalJSON reads [field, value] or {"field": …, "value": …}.
func (p *Pair) UnmarshalJSON(data []byte) error {
	var two []Bytes
	if err := json.Unmarshal(data, &two); err == nil {
		if len(two) != 2 {
			return fmt.Errorf("want [field, value], got %d elements", len(two))
		}
		p.Field, p.Value = two[0], two[1]
		return nil
	}
	var o struct {
		Field *Bytes `json:"field"`
		Value *Bytes `json:"value"`
	}
	if err := strictDecode(data, &o); err != nil || o.Field == nil || o.Value == nil {
		return errors.New("want [field, value]")
	}
	p.Field, p.Value = *o.Field, *o.Value
	return nil
}

// MarshalJSON writes [member, score]: the score a JSON number, or "inf"
// / "-inf" (JSON has no infinities).
func (s Scored) MarshalJSON() ([]byte, error) {
	var score any = s.Score
	switch {
	case math.IsInf(s.Score, 1):
		score = "inf"
	case math.IsInf(s.Score, -1):
		score = "-inf"
	}
	return json.Marshal([2]any{s.Member, score})
}

// UnmarshalJSON reads [member, score] (or {"member", "score"}); a score
// is a number or a string Redis would read ("inf", "+inf", "-inf",
// "1.5").
func (s *Scored) UnmarshalJSON(data []byte) error {
	var two []json.RawMessage
	if err := json.Unmarshal(data, &two); err == nil {
		if len(two) != 2 {
			return fmt.Errorf("want [member, score], got %d elements", len(two))
		}
		if err := json.Unmarshal(two[0], &s.Member); err != nil {
			return fmt.Errorf("member: %v", err)
		}
		return s.score(two[1])
	}
	var o struct {
		Member *Bytes           `json:"member"`
		Score  *json.RawMessage `json:"score"`
	}
	if err := strictDecode(data, &o); err != nil || o.Member == nil || o.Score == nil {
		return errors.New("want [member, score]")
	}
	s.Member = *o.Member
	return s.score(*o.Score)
}

func (s *Scored) score(raw json.RawMessage) error {
	var str string
	if err := json.Unmarshal(raw, &str); err == nil {
		f, err := strconv.ParseFloat(strings.TrimSpace(str), 64)
		if err != nil || math.IsNaN(f) {
			return fmt.Errorf("score %q: want a number, \"inf\" or \"-inf\"", str)
		}
		s.Score = f
		return nil
	}
	if err := json.Unmarshal(raw, &s.Score); err != nil {
		return fmt.Errorf("score %s: want a number, \"inf\" or \"-inf\"", raw)
	}
	return nil
}

func strictDecode(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}
