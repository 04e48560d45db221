package apiv1

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/redisview/stats"
	"github.com/keydeck/keydeck/redisview/value"
)

// Key is one key: its metadata, what its family's role makes of it, and
// one page of its value. A key of a sensitive family shows no value and
// no decoded state (withheld), on every path.
type Key struct {
	Conn string `json:"conn"`
	DB   int    `json:"db"`
	Key  Name   `json:"key"`
	Type string `json:"type" doc:"The key's Redis type, as TYPE answers: string, hash, list, set, zset, stream, or a module's type (ReJSON-RL, MBbloom--, vectorset …)."`
	// TTLMs: −1 when the key has no expiry.
	TTLMs int64 `json:"ttl_ms" doc:"Time to live in ms; -1: no expiry."`
	// Size is the string's bytes or the collection's elements.
	Size            *int64      `json:"size" doc:"A string's length in bytes, or a collection's elements; null when unknown."`
	Memory          *int64      `json:"memory" doc:"Bytes in Redis's memory (MEMORY USAGE); null when the server will not say (memory_note)."`
	MemoryEstimated bool        `json:"memory_estimated" doc:"memory is an estimate from a sample of a big collection."`
	MemoryNote      string      `json:"memory_note,omitempty"`
	Family          *string     `json:"family" doc:"The pack's family of the key; null when none."`
	Role            *string     `json:"role" doc:"The family's role; null when none."`
	Sensitive       bool        `json:"sensitive" doc:"The family is sensitive: value and state are never read."`
	Violations      []string    `json:"violations" doc:"How the key breaks its family's schema (type, TTL)."`
	NameParts       []NamePart  `json:"name_parts,omitempty" doc:"What each placeholder of the family's pattern holds in this key's name; absent when none."`
	Decoded         *Decoded    `json:"decoded,omitempty" doc:"The role's reading of the key; absent when no role reads it."`
	Value           Value       `json:"value"`
	Lookup          *Lookup     `json:"lookup,omitempty" doc:"The sorted-set member asked for with ?member=; absent when none was."`
	Actions         []KeyAction `json:"actions" nullable:"false" doc:"The kinds of action the caller's role may run on this key (POST /api/v1/actions/preview with this key)."`
	ActionsNote     string      `json:"actions_note,omitempty" doc:"Why there is no action: the console is read-only, the key is Keydeck's own, or the role has none."`
}

// KeyAction is one kind of action that applies to a key.
type KeyAction struct {
	Kind     string      `json:"kind"`
	Title    string      `json:"title"`
	Requires string      `json:"requires" doc:"The lowest role that may run it."`
	Args     []ActionArg `json:"args" nullable:"false" doc:"The arguments it takes (args of the preview request)."`
}

// ActionArg is one argument of a kind of action.
type ActionArg struct {
	Name string `json:"name"`
	Help string `json:"help,omitempty"`
}

// NamePart is one placeholder of a key's name (schema.NameParts).
type NamePart struct {
	Name  string `json:"name" doc:"The placeholder's name in the pattern."`
	Class string `json:"class" doc:"Its class: any, digits, base64url, hex, epoch …"`
	Raw   Name   `json:"raw" doc:"As it appears in the key, byte-exact."`
	// Meaning: the text a base64 placeholder encodes, an epoch's time …
	Meaning *Name  `json:"meaning,omitempty" doc:"Its decoded reading (the text a base64 placeholder encodes, an epoch's UTC time, a period's month); absent when none."`
	How     string `json:"how,omitempty" doc:"How meaning was read, or why raw is kept."`
}

// NamePartsOf maps schema.NameParts.
func NamePartsOf(ps []schema.NamePart) []NamePart {
	var out []NamePart
	for _, p := range ps {
		np := NamePart{Name: p.Name, Class: p.Class, Raw: Name(p.Raw), How: p.How}
		if p.Meaning != "" {
			m := Name(p.Meaning)
			np.Meaning = &m
		}
		out = append(out, np)
	}
	return out
}

// Lookup is one sorted-set member looked up (value.Lookup).
type Lookup struct {
	Member    Name     `json:"member"`
	Found     bool     `json:"found"`
	Score     *float64 `json:"score,omitempty" doc:"Its score; absent when not found or infinite (score_text)."`
	ScoreText string   `json:"score_text,omitempty" doc:"+inf or -inf for an infinite score."`
	Rank      *int64   `json:"rank,omitempty" doc:"ZRANK's (0 is the lowest score); absent when not found."`
	At        string   `json:"at,omitempty" doc:"The value page that holds it (give it as ?at=)."`
	Error     string   `json:"error,omitempty" doc:"The lookup failed: whether it is there is unknown."`
}

// LookupOf maps value.Lookup's answer. A sensitive key's lookup reads
// nothing: not found, withheld with the value.
func LookupOf(member string, m value.Member, err error) *Lookup {
	l := &Lookup{Member: Name(member)}
	switch {
	case err != nil:
		l.Error = err.Error()
	case m.Found && !m.Withheld:
		l.Found, l.At = true, m.At
		r := m.Rank
		l.Rank = &r
		if math.IsInf(m.Score, 0) {
			l.ScoreText = strings.ToLower(strconv.FormatFloat(m.Score, 'g', -1, 64))
		} else {
			s := m.Score
			l.Score = &s
		}
	}
	return l
}

// Decoded is what a role makes of a key.
type Decoded struct {
	Role     string `json:"role"`
	Withheld bool   `json:"withheld" doc:"The family is sensitive: not read."`
	Note     string `json:"note,omitempty" doc:"Why it was not decoded, or what is odd about the value."`
	Error    string `json:"error,omitempty" doc:"The read failed: the state is unknown."`
	// State is the role's state object (see StateOf), of the type its
	// role registered (registerState; the schema is Decoded.Schema's).
	State map[string]any `json:"state,omitempty"`
}

// Value is one bounded page of a key's value.
type Value struct {
	Withheld bool   `json:"withheld" doc:"The family is sensitive: nothing was read."`
	Error    string `json:"error,omitempty" doc:"The page could not be read (or is not shown), and why."`
	Length   int64  `json:"length" doc:"A string's bytes or a collection's elements."`
	Encoding string `json:"encoding,omitempty" doc:"OBJECT ENCODING."`
	// String is a string's bytes from Offset (a page of them).
	String   *Name     `json:"string,omitempty" doc:"A page of a string's bytes, from offset."`
	Offset   int64     `json:"offset" doc:"Where string starts, in bytes."`
	Elements []Element `json:"elements" doc:"A page of a collection's elements, in Redis's order."`
	At       string    `json:"at" doc:"Where this page starts (a scan cursor, an offset, a stream entry ID)."`
	Next     *string   `json:"next" doc:"Where the next page starts (give it as ?at=); null on the last."`
}

// Element is one entry of a collection; a part longer than a page shows
// cut (its full length in …_bytes).
type Element struct {
	Index      *int64   `json:"index" doc:"A list index or sorted-set rank (0-based); null elsewhere."`
	Name       *Name    `json:"name,omitempty" doc:"The hash field, set or sorted-set member, or stream entry ID."`
	NameBytes  int      `json:"name_bytes,omitempty" doc:"The name's full length."`
	Value      *Name    `json:"value,omitempty" doc:"The hash value or list element."`
	ValueBytes int      `json:"value_bytes,omitempty" doc:"The value's full length."`
	Score      *float64 `json:"score,omitempty" doc:"A sorted-set member's score; absent when infinite (score_text)."`
	ScoreText  string   `json:"score_text,omitempty" doc:"+inf or -inf for an infinite score."`
	Fields     []Name   `json:"fields,omitempty" doc:"A stream entry's fields and values, alternating."`
}

// KeyOf maps the key page's reads: InspectKey's metadata and memNote,
// value.Read's page (or its error).
func KeyOf(conn string, db int, info stats.KeyInfo, memNote string, pg value.Page, pgErr error) Key {
	k := Key{Conn: conn, DB: db, Key: Name(info.Name), Type: info.Type, TTLMs: Millis(info.TTL), Violations: []string{}, Actions: []KeyAction{}, MemoryNote: memNote, MemoryEstimated: info.MemoryEstimated}
	if info.Elements >= 0 {
		k.Size = &info.Elements
	}
	if info.Memory >= 0 {
		k.Memory = &info.Memory
	}
	k.Value = ValueOf(pg, pgErr)
	return k
}

// ValueOf maps one page of a value (value.Read), or the error that kept
// it from being read.
func ValueOf(pg value.Page, err error) Value {
	v := Value{Elements: []Element{}}
	switch {
	case err != nil:
		v.Error = err.Error()
		return v
	case pg.Withheld:
		v.Withheld = true
		return v
	case pg.Type == "none":
		v.Error = "the key vanished while its page was read (expired or deleted)"
		return v
	}
	v.Length, v.Encoding, v.At, v.Offset = pg.Length, pg.Encoding, pg.At, pg.Offset
	if pg.Next != "" {
		next := pg.Next
		v.Next = &next
	}
	if pg.Type == "string" {
		s := Name(pg.String)
		v.String = &s
		return v
	}
	for _, e := range pg.Elements {
		v.Elements = append(v.Elements, elementOf(pg.Type, e))
	}
	return v
}

func elementOf(typ string, e value.Element) Element {
	var out Element
	if e.Index >= 0 {
		i := e.Index
		out.Index = &i
	}
	if typ != "list" {
		n := Name(e.Name.Bytes)
		out.Name, out.NameBytes = &n, e.Name.Len
	}
	switch typ {
	case "hash", "list":
		v := Name(e.Value.Bytes)
		out.Value, out.ValueBytes = &v, e.Value.Len
	case "zset":
		if math.IsInf(e.Score, 0) {
			out.ScoreText = strings.ToLower(strconv.FormatFloat(e.Score, 'g', -1, 64))
		} else {
			s := e.Score
			out.Score = &s
		}
	case "stream":
		for _, f := range e.Fields {
			out.Fields = append(out.Fields, Name(f.Bytes))
		}
	}
	return out
}

// DecodedOf is the role's reading of a key of family f and type typ: nil
// when no role reads it (no family, a role without a reader, or read
// false: the key was not read by its role); withheld for a sensitive
// family, whatever was read; else the result res or the read's error,
// worded (errText, "" when none).
func DecodedOf(f *schema.Family, typ string, read bool, res decode.Result, errText string) *Decoded {
	switch {
	case f == nil || !f.Sensitive && !decode.Supported(f.Role):
		return nil
	case f.Sensitive || res.Sensitive:
		return &Decoded{Role: string(f.Role), Withheld: true}
	}
	d := &Decoded{Role: string(f.Role)}
	if v := f.TypeViolation(typ); v != "" {
		d.Note = "not decoded: " + v
		return d
	}
	switch {
	case !read:
		return nil
	case errText != "":
		d.Error = errText
	case res.Note != "":
		d.Note = "not decoded: " + res.Note
	case res.State != nil && !stateIs(f.Role, res.State):
		// The contract describes each role's registered state only.
		// Worded for the API's readers: no Go type name.
		d.Error = fmt.Sprintf("the %s reader's state is not the role's registered state", f.Role)
	default:
		d.State = StateOf(res.State)
	}
	return d
}
