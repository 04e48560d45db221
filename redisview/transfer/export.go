package transfer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/browse"
	"github.com/keydeck/keydeck/redisview/console"
	"github.com/keydeck/keydeck/redisview/schema"
)

// ErrSelection: an export's selection is not one it can run (400).
var ErrSelection = errors.New("bad export selection")

// Selection is what an export exports: one key, a family's keys, or the
// keys matching a glob.
type Selection struct {
	Key     string         // one key, byte-exact
	Family  *schema.Family // every key of the family (Classifier decides)
	Pattern string         // every key SCAN MATCH finds
	// Classifier is the connection's; with Family it decides which keys
	// belong.
	Classifier *schema.Classifier
}

// CheckGlob bounds a pattern as the console bounds MATCH: Redis matches
// a glob by backtracking against every name it walks.
func CheckGlob(g string) error {
	n := strings.Count(g, "*") + strings.Count(g, "?") + strings.Count(g, "[")
	switch {
	case g == "":
		return fmt.Errorf("%w: an empty pattern", ErrSelection)
	case len(g) > console.MaxGlobBytes || n > console.MaxGlobMeta:
		return fmt.Errorf("%w: a pattern is at most %d bytes with at most %d wildcards (*, ? and [)", ErrSelection, console.MaxGlobBytes, console.MaxGlobMeta)
	}
	return nil
}

// walk is the SCAN MATCH/TYPE of a selection, and whether a key belongs.
func (s Selection) walk(db int) (match, typ string, belongs func(string) bool, err error) {
	switch {
	case s.Family != nil:
		if s.Classifier == nil {
			return "", "", nil, fmt.Errorf("%w: a family needs the connection's classifier", ErrSelection)
		}
		w := browse.WalkOf(browse.Request{Family: s.Family})
		return w.Match, w.Type, func(k string) bool {
			f, ok := s.Classifier.Classify(db, k)
			return ok && f == s.Family
		}, nil
	case s.Pattern != "":
		if err := CheckGlob(s.Pattern); err != nil {
			return "", "", nil, err
		}
		return s.Pattern, "", func(string) bool { return true }, nil
	}
	return "", "", nil, fmt.Errorf("%w: name a key, a family or a pattern", ErrSelection)
}

// Export streams a selection's keys of one database as JSON Lines.
type Export struct {
	Reader *Reader // reads the keys (its Budget paces the value reads)
	Select Selection
	DB     int
	// Count is each SCAN call's COUNT (0: 200); Budget, when set, gives
	// COUNT keys before each SCAN call.
	Count  int64
	Budget Budget
	// Skip leaves keys out without a line: Keydeck's own keys (the audit
	// log, keydeck:*), never exported.
	Skip func(key string) bool
	// Flush is called after each SCAN page's lines (an HTTP response
	// sends them).
	Flush func()
	// Dedup bounds the names remembered to drop a key SCAN returns twice
	// (0: DefaultDedup); past it they are forgotten, so in the rare
	// case of a rehash a key's line may appear twice (import accepts a
	// repeated identical line).
	Dedup int

	buf []byte // the line being written
}

// Stats is what an export wrote.
type Stats struct {
	Keys     int64 // lines written
	Withheld int64 // of which without value: a sensitive family
	Skipped  int64 // of which without value: too large, or of a type not exported
	Scans    int64 // SCAN calls
	Bytes    int64 // bytes written
	// Remembered is the most key names held at once to drop SCAN's
	// repeats (at most Dedup).
	Remembered int
}

// DefaultDedup: 100,000 names (a few MB) remembered against SCAN's
// repeats, which come across a rehash, within a few pages.
const DefaultDedup = 100_000

// Run writes the lines to w. It ends with ctx (a closed response) or the
// first error; what was written stays written (each line is whole).
func (e *Export) Run(ctx context.Context, w io.Writer) (Stats, error) {
	var st Stats
	if e.Select.Key != "" {
		if e.Skip != nil && e.Skip(e.Select.Key) {
			return st, nil
		}
		return st, e.one(ctx, w, &st, e.Select.Key)
	}
	match, typ, belongs, err := e.Select.walk(e.DB)
	if err != nil {
		return st, err
	}
	count := e.Count
	if count <= 0 {
		count = browse.Count
	}
	seen := map[string]bool{} // SCAN may return a key twice
	dedup := e.Dedup
	if dedup <= 0 {
		dedup = DefaultDedup
	}
	cur := redisview.CursorStart
	for first := true; first || !cur.Done(); first = false {
		if e.Budget != nil {
			if err := e.Budget.Take(ctx, count); err != nil {
				return st, err
			}
		}
		var keys []string
		if keys, cur, err = redisview.ScanStep(ctx, e.Reader.C, cur, match, count, typ); err != nil {
			return st, err
		}
		st.Scans++
		var page []string
		for _, k := range keys {
			if seen[k] || !belongs(k) || e.Skip != nil && e.Skip(k) {
				continue
			}
			if len(seen) >= dedup {
				clear(seen)
			}
			seen[k] = true
			st.Remembered = max(st.Remembered, len(seen))
			page = append(page, k)
		}
		if err := e.page(ctx, w, &st, page); err != nil {
			return st, err
		}
		if e.Flush != nil {
			e.Flush()
		}
	}
	return st, nil
}

// one writes one key's line (none when it is gone).
func (e *Export) one(ctx context.Context, w io.Writer, st *Stats, key string) error {
	r, ok, err := e.Reader.Read(ctx, key)
	if err != nil || !ok {
		return err
	}
	return e.line(w, st, r)
}

// page writes the lines of a SCAN page's keys: their types and TTLs in
// one pipeline (a key costs one key of the budget), then each value.
func (e *Export) page(ctx context.Context, w io.Writer, st *Stats, keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	if e.Reader.Budget != nil {
		if err := e.Reader.Budget.Take(ctx, int64(len(keys))); err != nil {
			return err
		}
	}
	heads, err := e.Reader.heads(ctx, keys)
	if err != nil {
		return err
	}
	return e.Reader.readPage(ctx, heads, func(r Record) error { return e.line(w, st, r) })
}

func (e *Export) line(w io.Writer, st *Stats, r Record) error {
	line, err := AppendLine(e.buf[:0], r)
	if err != nil {
		return err
	}
	e.buf = append(line, '\n')
	n, err := w.Write(e.buf)
	st.Bytes += int64(n)
	if err != nil {
		return err
	}
	st.Keys++
	switch {
	case r.Withheld != "":
		st.Withheld++
	case r.Skipped != "":
		st.Skipped++
	}
	return nil
}

// ExportOf is an export of a connection's database: values read from
// that database, withheld for sensitive families (and all of them while
// the connection's pack is not known), paced by budget.
func ExportOf(conn *redisview.Conn, db int, sel Selection, budget Budget) *Export {
	return &Export{
		Reader: &Reader{C: conn.DB(db), Budget: budget, Withhold: WithholdOf(conn, db)},
		Select: sel, DB: db, Budget: budget,
	}
}

// WithholdOf says why a key of conn's database db must not be exported:
// its family is sensitive.
func WithholdOf(conn *redisview.Conn, db int) func(string) string {
	return func(key string) string {
		if !conn.Sensitive(db, key) {
			return ""
		}
		if cls := conn.Classifier(); cls != nil {
			if f, ok := cls.Classify(db, key); ok {
				return "sensitive: family " + f.ID + "'s values are never exported"
			}
		}
		return "sensitive: the connection's pack is not known yet, so every value is withheld"
	}
}
