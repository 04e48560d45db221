package transfer

import (
	"context"

	"github.com/keydeck/keydeck/redisview"
)

// The classes of a line the import leaves alone whatever the database
// holds.
const (
	// Sensitive: a key of a sensitive family with a value. Not imported:
	// the job keeps each line in Keydeck's own Redis until it has run,
	// and a sensitive value is never stored there.
	Sensitive Class = "sensitive"
	// Protected: one of Keydeck's own keys, which nothing changes.
	Protected Class = "keydeck"
)

// PreviewLine is one line of a file with what the import would do.
type PreviewLine struct {
	Record  Record // the line (its value is not for display: sizes only)
	Verdict Verdict
	Line    int // 1-based among the file's keys
}

// Preview is what importing a file into one database would do.
type Preview struct {
	Lines []PreviewLine
	Count map[Class]int
}

// Writes are the lines the import writes: new and overwritten keys.
func (p Preview) Writes() []Record {
	var out []Record
	for _, l := range p.Lines {
		if l.Verdict.Class == New || l.Verdict.Class == Overwritten {
			out = append(out, l.Record)
		}
	}
	return out
}

// PreviewImport classes each line against database db of conn, reading
// each key as export reads it (bounded pages, capped). protected names
// Keydeck's own keys.
func PreviewImport(ctx context.Context, conn *redisview.Conn, db int, recs []Record, protected func(string) bool) (Preview, error) {
	rd := &Reader{C: conn.DB(db)}
	pv := Preview{Count: map[Class]int{}}
	for i, r := range recs {
		l := PreviewLine{Record: r, Line: i + 1}
		switch {
		case protected != nil && protected(string(r.Key)):
			l.Verdict.Class = Protected
		case !r.HasValue():
			l.Verdict.Class = NoValue
		case conn.Sensitive(db, string(r.Key)):
			l.Verdict.Class = Sensitive
		default:
			v, err := Classify(ctx, rd, r)
			if err != nil {
				return Preview{}, conn.WrapErr(err)
			}
			l.Verdict = v
		}
		pv.Count[l.Verdict.Class]++
		pv.Lines = append(pv.Lines, l)
	}
	return pv, nil
}
