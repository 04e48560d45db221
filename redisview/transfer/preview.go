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

// previewPage is how many keys the preview reads in one pipeline.
const previewPage = 200

// PreviewImport classes each line against database db of conn, reading
// the keys as export reads them (a page of keys a pipeline, values
// bounded and capped), paced by budget (nil: unpaced). protected names
// Keydeck's own keys.
func PreviewImport(ctx context.Context, conn *redisview.Conn, db int, recs []Record, protected func(string) bool, budget Budget) (Preview, error) {
	rd := &Reader{C: conn.DB(db), Budget: budget}
	pv := Preview{Count: map[Class]int{}, Lines: make([]PreviewLine, len(recs))}
	var read []int // the lines whose key is read
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
			read = append(read, i)
		}
		pv.Lines[i] = l
	}
	for len(read) > 0 {
		page := read[:min(previewPage, len(read))]
		read = read[len(page):]
		if err := rd.classifyPage(ctx, pv.Lines, page); err != nil {
			return Preview{}, conn.WrapErr(err)
		}
	}
	for _, l := range pv.Lines {
		pv.Count[l.Verdict.Class]++
	}
	return pv, nil
}

// classifyPage reads the keys of lines[page] in the export's pipelines
// and classes each line (ReadAll leaves a file no key twice).
func (rd *Reader) classifyPage(ctx context.Context, lines []PreviewLine, page []int) error {
	keys := make([]string, len(page))
	for j, i := range page {
		keys[j] = string(lines[i].Record.Key)
	}
	if err := rd.take(ctx, int64(len(keys))); err != nil {
		return err
	}
	heads, err := rd.heads(ctx, keys)
	if err != nil {
		return err
	}
	at := make(map[Bytes]int, len(keys))
	for _, i := range page {
		at[lines[i].Record.Key] = i
		lines[i].Verdict = Verdict{Class: New} // unless read below
	}
	// Each key is classed as soon as it is read: its value is not kept.
	return rd.readPage(ctx, heads, func(r Record) error {
		if i, ok := at[r.Key]; ok {
			lines[i].Verdict = verdict(r, true, lines[i].Record)
		}
		return nil
	})
}
