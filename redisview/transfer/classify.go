package transfer

import (
	"context"
	"math"
	"slices"
	"strings"
	"time"
)

// Class is what an import would do to one key.
type Class string

// The classes of an import's keys.
const (
	// New: the key does not exist; the import creates it.
	New Class = "new"
	// Overwritten: the key exists with another value (or type, or TTL);
	// the import replaces it.
	Overwritten Class = "overwritten"
	// Identical: the key holds the same type, value and TTL (within a
	// second); the import leaves it as it is.
	Identical Class = "identical"
	// NoValue: the line carries no value (withheld or skipped at export);
	// the import leaves the key alone.
	NoValue Class = "no-value"
)

// Verdict is one key's class, with what it holds now.
type Verdict struct {
	Class Class
	// Current is what the key holds now (Overwritten, Identical).
	Current Size
	// TTLDiffers: the key holds the same value with another TTL (or
	// none); it is Overwritten, so that it gets the file's TTL.
	TTLDiffers bool
}

// Size is a key's size: its type, elements (1 for a string) and the bytes
// of its names and values; Over says it is above the reader's cap (then
// the figures are what was read up to it).
type Size struct {
	Type     string
	Elements int64
	Bytes    int64
	TTL      time.Duration // 0: none
	Over     string
}

// SizeOf is a record's size.
func SizeOf(r Record) Size {
	s := Size{Type: r.Type, TTL: msDuration(r.TTL), Over: r.Skipped}
	add := func(bs ...Bytes) {
		s.Elements++
		for _, b := range bs {
			s.Bytes += int64(len(b))
		}
	}
	switch r.Type {
	case TypeString:
		add(r.String)
	case TypeHash:
		for _, p := range r.Pairs {
			add(p.Field, p.Value)
		}
	case TypeList, TypeSet:
		for _, it := range r.Items {
			add(it)
		}
	case TypeZSet:
		for _, z := range r.Scored {
			add(z.Member)
		}
	case TypeStream:
		if r.Stream != nil {
			for _, e := range r.Stream.Entries {
				s.Elements++
				for _, f := range e.Fields {
					s.Bytes += int64(len(f.Field) + len(f.Value))
				}
			}
		}
	}
	return s
}

// msDuration is ms as a Duration, held at the largest one (292 years)
// above it.
func msDuration(ms int64) time.Duration {
	if ms > int64(math.MaxInt64/time.Millisecond) {
		return math.MaxInt64
	}
	return time.Duration(ms) * time.Millisecond
}

// sameTTL: both without TTL, or both with TTLs within a second (the
// time between the export's read and the preview's).
func sameTTL(a, b int64) bool {
	if a == 0 || b == 0 {
		return a == b
	}
	return a-b <= 1000 && b-a <= 1000
}

// Classify reads key r.Key (bounded, as export reads) and says what
// importing r would do to it. rd reads every value (no Withhold): the
// comparison happens here and only sizes come out.
func Classify(ctx context.Context, rd *Reader, r Record) (Verdict, error) {
	if !r.HasValue() {
		return Verdict{Class: NoValue}, nil
	}
	cur, ok, err := rd.Read(ctx, string(r.Key))
	if err != nil {
		return Verdict{}, err
	}
	return verdict(cur, ok, r), nil
}

// verdict classes r against cur, what its key holds (ok false: none).
func verdict(cur Record, ok bool, r Record) Verdict {
	if !ok {
		return Verdict{Class: New}
	}
	v := Verdict{Class: Overwritten, Current: SizeOf(cur)}
	if cur.HasValue() && Same(cur, r) {
		if sameTTL(cur.TTL, r.TTL) {
			v.Class = Identical
		} else {
			v.TTLDiffers = true
		}
	}
	return v
}

// Same reports whether two records hold the same type and value, in
// canonical form: a hash's fields and a set's members in any order, a
// sorted set as members with their scores, a stream's entries in order
// and the ID it last generated. TTLs are not compared (sameTTL does).
func Same(a, b Record) bool {
	if a.Type != b.Type {
		return false
	}
	switch a.Type {
	case TypeString:
		return a.String == b.String
	case TypeList:
		return slices.Equal(a.Items, b.Items)
	case TypeSet:
		return slices.Equal(sorted(a.Items), sorted(b.Items))
	case TypeHash:
		return slices.Equal(sortedPairs(a.Pairs), sortedPairs(b.Pairs))
	case TypeZSet:
		return sameScores(a.Scored, b.Scored)
	case TypeStream:
		return sameStream(a.Stream, b.Stream)
	}
	return false
}

func sorted(bs []Bytes) []Bytes {
	out := slices.Clone(bs)
	slices.Sort(out)
	return out
}

func sortedPairs(ps []Pair) []Pair {
	out := slices.Clone(ps)
	slices.SortFunc(out, func(x, y Pair) int { return strings.Compare(string(x.Field), string(y.Field)) })
	return out
}

func sameScores(a, b []Scored) bool {
	if len(a) != len(b) {
		return false
	}
	m := make(map[Bytes]float64, len(a))
	for _, z := range a {
		m[z.Member] = z.Score
	}
	for _, z := range b {
		s, ok := m[z.Member]
		if !ok || !(s == z.Score || math.IsInf(s, 0) && s == z.Score) {
			return false
		}
	}
	return len(m) == len(b)
}

func sameStream(a, b *Stream) bool {
	if a == nil || b == nil {
		return a == b
	}
	if lastID(a) != lastID(b) || len(a.Entries) != len(b.Entries) {
		return false
	}
	for i, e := range a.Entries {
		f := b.Entries[i]
		if e.ID != f.ID || !slices.Equal(e.Fields, f.Fields) {
			return false
		}
	}
	return true
}

// lastID is the ID a stream last generated: its own, or its last entry's.
func lastID(s *Stream) string {
	if s.LastID != "" || len(s.Entries) == 0 {
		return s.LastID
	}
	return s.Entries[len(s.Entries)-1].ID
}
