package transfer

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
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
	case len(*w.Key) > MaxKeyBytes:
		return r, errors.New(`"key" longer than 1 MB`)
	case w.TTL != nil && (*w.TTL <= 0 || *w.TTL > MaxTTL):
		return r, fmt.Errorf(`"ttl_ms" %d: want a positive number of ms up to %d, or null for none`, *w.TTL, int64(MaxTTL))
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
	if n := r.elements(); n > MaxElements {
		return r, fmt.Errorf("%s value of %d elements: an import line holds at most %d", r.Type, n, MaxElements)
	}
	return r, nil
}

// MaxTTL bounds "ttl_ms": Redis refuses an expiry that, added to its
// clock, passes 2^63-1 ms; 2^62 ms (146 million years) never does.
const MaxTTL = 1 << 62

// MaxElements bounds the elements (fields, members, entries) of one
// import line, as export's reader bounds a key.
const MaxElements = 1_000_000

// elements counts r's value's elements.
func (r *Record) elements() int {
	switch r.Type {
	case TypeHash:
		return len(r.Pairs)
	case TypeList, TypeSet:
		return len(r.Items)
	case TypeZSet:
		return len(r.Scored)
	case TypeStream:
		if r.Stream != nil {
			return len(r.Stream.Entries)
		}
	}
	return 1
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
		return r.Stream.read(s.Entries)
	case "":
		return errors.New(`no "type"`)
	}
	return fmt.Errorf("type %q: want string, hash, list, set, zset or stream", r.Type)
}

// read checks a stream line as XADD would take it, so that no write of
// it can be refused once its key was deleted: IDs within range, above
// 0-0 and strictly increasing, a last ID not below the last entry's.
func (st *Stream) read(entries []wireEntry) error {
	prev := streamPos{}
	for i, e := range entries {
		id, ok := parseID(e.ID)
		switch {
		case !ok || id == (streamPos{}):
			return fmt.Errorf("entry %d: id %q: want MS-SEQ above 0-0, each part at most %d", i+1, e.ID, uint64(math.MaxUint64))
		case !prev.less(id):
			return fmt.Errorf("entry %d: id %s is not above the entry before it (%d-%d): IDs must grow", i+1, e.ID, prev.ms, prev.seq)
		case len(e.Fields) == 0:
			return fmt.Errorf("entry %d (%s) has no fields", i+1, e.ID)
		}
		prev = id
		st.Entries = append(st.Entries, Entry{ID: e.ID, Fields: e.Fields})
	}
	if st.LastID == "" {
		if len(entries) == 0 {
			return errors.New("an empty stream needs its last_id")
		}
		return nil
	}
	last, ok := parseID(st.LastID)
	switch {
	case !ok:
		return fmt.Errorf("last_id %q: want MS-SEQ, each part at most %d", st.LastID, uint64(math.MaxUint64))
	case last.less(prev):
		return fmt.Errorf("last_id %s is below the last entry's id %d-%d", st.LastID, prev.ms, prev.seq)
	}
	return nil
}

// streamPos is a parsed stream ID.
type streamPos struct{ ms, seq uint64 }

func (a streamPos) less(b streamPos) bool { return a.ms < b.ms || a.ms == b.ms && a.seq < b.seq }

func parseID(s string) (streamPos, bool) {
	if !streamID.MatchString(s) {
		return streamPos{}, false
	}
	m, q, _ := strings.Cut(s, "-")
	ms, err1 := strconv.ParseUint(m, 10, 64)
	seq, err2 := strconv.ParseUint(q, 10, 64)
	return streamPos{ms, seq}, err1 == nil && err2 == nil
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
// LineError names it). Blank lines are allowed. A key named twice is an
// error (which line would win is not obvious), unless the second line
// holds the same value and TTL (within a second): export may write a key
// twice when SCAN returns it twice across a rehash; the repeat is dropped.
func ReadAll(rd io.Reader, lim Limits) ([]Record, error) {
	sc := bufio.NewScanner(rd)
	// The first buffer no larger than the bound: the larger of the two is the bound.
	sc.Buffer(make([]byte, 0, min(64<<10, lim.LineBytes)), lim.LineBytes)
	var out []Record
	type lineAt struct{ line, at int }
	seen := map[Bytes]lineAt{}
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
		if !utf8.Valid(line) {
			return nil, &LineError{n, errors.New(`not valid UTF-8: write names and values that are not text as {"b64": "…"}`)}
		}
		r, err := ParseLine(line)
		if err != nil {
			return nil, &LineError{n, err}
		}
		if first, ok := seen[r.Key]; ok {
			if prev := out[first.at]; sameLine(prev, r) {
				continue
			}
			return nil, &LineError{n, fmt.Errorf("key %s already on line %d", quote(r.Key), first.line)}
		}
		seen[r.Key] = lineAt{n, len(out)}
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

// sameLine: b repeats a (a key export read twice).
func sameLine(a, b Record) bool {
	if !a.HasValue() || !b.HasValue() {
		return a.Withheld == b.Withheld && a.Skipped == b.Skipped && a.Type == b.Type
	}
	return Same(a, b) && sameTTL(a.TTL, b.TTL)
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
