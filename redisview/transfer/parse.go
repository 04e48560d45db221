package transfer

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// ErrLine is a line of an import that is not one of this format; the
// error names the line.
var ErrLine = errors.New("bad line")

// LineError is what is wrong with one line (1-based).
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string   { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *LineError) Unwrap() []error { return []error{ErrLine, e.Err} }

// MaxKeyBytes bounds a key name in a line (Keydeck's actions take names
// up to 1 MB too).
const MaxKeyBytes = 1 << 20

var streamID = regexp.MustCompile(`^[0-9]{1,20}-[0-9]{1,20}$`)

// ParseLine reads one line.
func ParseLine(line []byte) (Record, error) {
	var w wire
	if err := strictDecode(line, &w); err != nil {
		return Record{}, fmt.Errorf("not a JSON object of this format: %v", err)
	}
	var r Record
	switch {
	case w.Key == nil:
		return r, errors.New(`no "key"`)
	case *w.Key == "" || len(*w.Key) > MaxKeyBytes:
		return r, errors.New(`"key" empty or longer than 1 MB`)
	case w.TTL != nil && *w.TTL <= 0:
		return r, fmt.Errorf(`"ttl_ms" %d: want a positive number of ms, or null for none`, *w.TTL)
	}
	r.Key, r.Type, r.Withheld, r.Skipped = *w.Key, w.Type, w.Withheld, w.Skipped
	if w.TTL != nil {
		r.TTL = *w.TTL
	}
	if w.Sensitive && r.Withheld == "" {
		r.Withheld = "sensitive: value not exported"
	}
	noValue := len(w.Value) == 0 || string(w.Value) == "null"
	if !r.HasValue() {
		if !noValue {
			return r, errors.New(`a line marked "withheld" or "skipped" carries no "value"`)
		}
		return r, nil
	}
	if noValue {
		return r, errors.New(`no "value"`)
	}
	if err := r.readValue(w.Value); err != nil {
		return r, fmt.Errorf("%s value: %w", r.Type, err)
	}
	return r, nil
}

// readValue decodes the value of r's type.
func (r *Record) readValue(raw json.RawMessage) error {
	switch r.Type {
	case TypeString:
		return json.Unmarshal(raw, &r.String)
	case TypeHash:
		if bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) {
			return r.readHashObject(raw)
		}
		return nonEmpty(json.Unmarshal(raw, &r.Pairs), len(r.Pairs))
	case TypeList, TypeSet:
		return nonEmpty(json.Unmarshal(raw, &r.Items), len(r.Items))
	case TypeZSet:
		return nonEmpty(json.Unmarshal(raw, &r.Scored), len(r.Scored))
	case TypeStream:
		var s wireStream
		if err := strictDecode(raw, &s); err != nil {
			return errors.New(`want {"entries": [{"id": "MS-SEQ", "fields": [[field, value], …]}, …], "last_id": …}`)
		}
		r.Stream = &Stream{LastID: s.LastID}
		for i, e := range s.Entries {
			if !streamID.MatchString(e.ID) || e.ID == "0-0" {
				return fmt.Errorf("entry %d: id %q: want MS-SEQ above 0-0", i+1, e.ID)
			}
			if len(e.Fields) == 0 {
				return fmt.Errorf("entry %d (%s) has no fields", i+1, e.ID)
			}
			r.Stream.Entries = append(r.Stream.Entries, Entry{ID: e.ID, Fields: e.Fields})
		}
		if s.LastID != "" && !streamID.MatchString(s.LastID) {
			return fmt.Errorf("last_id %q: want MS-SEQ", s.LastID)
		}
		if len(s.Entries) == 0 && s.LastID == "" {
			return errors.New("an empty stream needs its last_id")
		}
		return nil
	case "":
		return errors.New(`no "type"`)
	}
	return fmt.Errorf("type %q: want string, hash, list, set, zset or stream", r.Type)
}

// readHashObject reads {"field": "value", …} (text fields only), a reading
// of a hash people write by hand.
func (r *Record) readHashObject(raw json.RawMessage) error {
	var m map[string]Bytes
	if err := json.Unmarshal(raw, &m); err != nil {
		return err
	}
	for f, v := range m {
		r.Pairs = append(r.Pairs, Pair{Field: Bytes(f), Value: v})
	}
	return nonEmpty(nil, len(r.Pairs))
}

// nonEmpty refuses an empty collection: Redis has no empty hash, list,
// set or sorted set.
func nonEmpty(err error, n int) error {
	if err == nil && n == 0 {
		return errors.New("empty: Redis keeps no empty collection")
	}
	return err
}

// Limits bound a file read for import.
type Limits struct {
	LineBytes int // one line; a longer one is an error naming it
	Lines     int // keys in a file
}

// DefaultLimits: lines up to 64 MB, 100,000 keys a file.
var DefaultLimits = Limits{LineBytes: 64 << 20, Lines: 100_000}

// ReadAll reads a file of lines, stopping at the first bad one (its
// LineError names it). Blank lines are allowed; a key named twice is an
// error (which line would win is not obvious).
func ReadAll(rd io.Reader, lim Limits) ([]Record, error) {
	sc := bufio.NewScanner(rd)
	// The first buffer no larger than the bound: the larger of the two is the bound.
	sc.Buffer(make([]byte, 0, min(64<<10, lim.LineBytes)), lim.LineBytes)
	var out []Record
	seen := map[Bytes]int{}
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if len(out) == lim.Lines {
			return nil, &LineError{n, fmt.Errorf("more than %d keys in one file", lim.Lines)}
		}
		r, err := ParseLine(line)
		if err != nil {
			return nil, &LineError{n, err}
		}
		if first, ok := seen[r.Key]; ok {
			return nil, &LineError{n, fmt.Errorf("key %s already on line %d", quote(r.Key), first)}
		}
		seen[r.Key] = n
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, &LineError{n + 1, fmt.Errorf("longer than %d bytes", lim.LineBytes)}
		}
		return nil, err
	}
	return out, nil
}

// quote is a name for a message: quoted, escaped, cut to 80 bytes.
func quote(b Bytes) string {
	s := string(b)
	if len(s) > 80 {
		s = s[:80]
		return fmt.Sprintf("%q…", strings.ToValidUTF8(s, "\uFFFD"))
	}
	return fmt.Sprintf("%q", s)
}
