// Package value reads what a key holds, by its type, one bounded page at a
// time: never a whole key of unknown size. Strings are read up to
// MaxString bytes (GETRANGE); hashes and sets by HSCAN/SSCAN pages with
// COUNT (a filter goes to MATCH, glob-escaped); lists, sorted sets and
// streams by windows (LRANGE, ZRANGE by rank WITHSCORES, XRANGE COUNT).
// Every element is cut to MaxPart bytes and carries its full byte length,
// so a page holds at most PageSize elements and about 64 KiB of text.
//
// A key of a sensitive family is never read: Read returns a Page that says
// it was withheld, with no value in it.
package value

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview"
)

const (
	// PageSize is how many elements one page asks for.
	PageSize = 100
	// MaxString is how much of a string is read.
	MaxString = 64 << 10
	// MaxPart is how many bytes of one field, member or value a page keeps:
	// PageSize elements of two parts stay under 64 KiB.
	MaxPart = 320
	// maxScans bounds the HSCAN/SSCAN calls one filtered page may make
	// while its matches are sparse.
	maxScans = 8
)

// ErrCursor: the page position does not fit the key's type (a stream ID
// for a list, a negative offset) — a malformed request.
var ErrCursor = errors.New("bad page position")

// Request names the page to read.
type Request struct {
	// Type is the key's type as TYPE answers it; "" reads it.
	Type string
	// At is where the page starts: an HSCAN/SSCAN cursor, a list or rank
	// offset, or a stream entry ID (exclusive when it starts with "(").
	// "" is the start.
	At string
	// Filter keeps hash fields and set members containing it (as text, not
	// a pattern: glob characters in it match themselves).
	Filter string
}

// Part is one field, member or value, cut to MaxPart bytes.
type Part struct {
	Bytes string // at most MaxPart bytes
	Len   int    // the full length in bytes
}

// Cut reports whether Bytes is shorter than the part.
func (p Part) Cut() bool { return len(p.Bytes) < p.Len }

func part(s string) Part {
	p := Part{Bytes: s, Len: len(s)}
	if len(s) > MaxPart {
		p.Bytes = s[:MaxPart]
	}
	return p
}

// Element is one entry of a collection.
type Element struct {
	// Index is a list index or a sorted-set rank (0-based); -1 elsewhere.
	Index int64
	// Name is the hash field, set or sorted-set member, or stream entry ID.
	Name Part
	// Value is the hash value or list element; for a stream entry, its
	// fields and values as "field value" pairs in Fields.
	Value  Part
	Score  float64
	Fields []Part
}

// Page is one bounded page of a key's value.
type Page struct {
	Key  string
	Type string
	// Withheld: the key's family is sensitive; nothing was read.
	Withheld bool
	// Length is the string's byte length or the collection's element count.
	Length int64
	// String is the start of a string value (at most MaxString bytes).
	String string
	// Elements of a collection, in the order Redis returned them.
	Elements []Element
	// At is where this page started; Next where the next one starts (""
	// at the end); Prev where the previous window starts (windows only,
	// "" at the start). Scans cannot go back: their Prev is "".
	At, Next, Prev string
	// Filter is the filter the page applied.
	Filter string
	// Scanned: hash and set pages come from a scan, whose pages may repeat
	// an element and whose sizes vary.
	Scanned bool
}

// ErrTooLarge: the collection's elements are too big to page through here
// (a page would pull megabytes from Redis before cutting them).
var ErrTooLarge = errors.New("elements too large to show")

// Bounds on what one page of a collection may pull from Redis before its
// elements are cut: elements are cut after they arrive, so a page of a
// list of 10 MB items would carry a gigabyte.
const (
	// maxMeasured is the most elements a collection may have for its exact
	// size to be measured (MEMORY USAGE … SAMPLES 0 walks every element).
	maxMeasured = 1000
	// maxPageBytes is the most a collection measured exactly may hold to be
	// paged: any page of it is smaller.
	maxPageBytes = 8 << 20
)

// bounded refuses to page a collection whose elements could be huge. A
// compact encoding (listpack, ziplist, intset) holds only elements under
// the server's small-value thresholds (64 bytes by default); any other
// collection of up to maxMeasured elements is measured exactly. A larger
// collection of another encoding cannot be measured without walking it
// all; it is paged (its elements arrive whole, then are cut).
func bounded(ctx context.Context, c *redis.Client, key, typ string) error {
	switch typ {
	case "hash", "set", "list", "zset", "stream":
	default:
		return nil // strings are read by GETRANGE, bounded
	}
	var enc *redis.StringCmd
	n := redis.NewIntCmd(ctx, lengthCommand(typ), key)
	_, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		enc = p.ObjectEncoding(ctx, key)
		_ = p.Process(ctx, n)
		return nil
	})
	if redisview.IsConnErr(err) {
		return err
	}
	switch enc.Val() { // "" when OBJECT is refused: measured below
	case "listpack", "ziplist", "intset":
		return nil
	}
	if n.Err() != nil || n.Val() > maxMeasured {
		return nil
	}
	mem, err := c.MemoryUsage(ctx, key, 0).Result()
	switch {
	case err == redis.Nil:
		return nil
	case err != nil:
		return nil // the server will not say (ACL, an old server): paged as before
	case mem > maxPageBytes:
		return fmt.Errorf("%w: its %d elements take %d bytes in memory; Keydeck pages only collections it can bound (up to %d bytes)", ErrTooLarge, n.Val(), mem, maxPageBytes)
	}
	return nil
}

func lengthCommand(typ string) string {
	return map[string]string{"hash": "hlen", "set": "scard", "list": "llen", "zset": "zcard", "stream": "xlen"}[typ]
}

// Read reads one page of key in database db of conn.
func Read(ctx context.Context, conn *redisview.Conn, db int, key string, req Request) (Page, error) {
	pg := Page{Key: key, At: req.At, Filter: req.Filter}
	if conn.Sensitive(db, key) {
		pg.Withheld = true
		return pg, nil
	}
	c := conn.DB(db)
	typ := req.Type
	if typ == "" {
		t, err := c.Type(ctx, key).Result()
		if err != nil {
			return pg, conn.WrapErr(redisview.ReadError("reading the type of a key", err))
		}
		typ = t
	}
	pg.Type = typ
	if err := bounded(ctx, c, key, typ); err != nil {
		if errors.Is(err, ErrTooLarge) {
			return pg, err
		}
		return pg, conn.WrapErr(redisview.ReadError("sizing a key's value", err))
	}
	var err error
	switch typ {
	case "none":
		return pg, nil
	case "string":
		err = readString(ctx, c, key, &pg)
	case "hash", "set":
		err = readScan(ctx, c, key, typ, req, &pg)
	case "list", "zset":
		err = readWindow(ctx, c, key, typ, req, &pg)
	case "stream":
		err = readStream(ctx, c, key, req, &pg)
	default:
		return pg, fmt.Errorf("%w: Keydeck cannot show a value of type %q", ErrCursor, typ)
	}
	if err != nil && !errors.Is(err, ErrCursor) {
		err = conn.WrapErr(redisview.ReadError("reading a key's value", err))
	}
	return pg, err
}

func readString(ctx context.Context, c *redis.Client, key string, pg *Page) error {
	p := c.Pipeline()
	n := p.StrLen(ctx, key)
	s := p.GetRange(ctx, key, 0, MaxString-1)
	if _, err := p.Exec(ctx); err != nil {
		return err
	}
	pg.Length, pg.String = n.Val(), s.Val()
	return nil
}

// globEscape makes s match itself in a MATCH pattern.
func globEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '*', '?', '[', ']', '\\', '^', '-':
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func readScan(ctx context.Context, c *redis.Client, key, typ string, req Request, pg *Page) error {
	pg.Scanned = true
	cursor := uint64(0)
	if req.At != "" {
		n, err := strconv.ParseUint(req.At, 10, 64)
		if err != nil || strconv.FormatUint(n, 10) != req.At {
			return fmt.Errorf("%w: %q is not a scan cursor", ErrCursor, req.At)
		}
		cursor = n
	}
	match := ""
	if req.Filter != "" {
		match = "*" + globEscape(req.Filter) + "*"
	}
	var length *redis.IntCmd
	if typ == "hash" {
		length = c.HLen(ctx, key)
	} else {
		length = c.SCard(ctx, key)
	}
	if err := length.Err(); err != nil {
		return err
	}
	pg.Length = length.Val()
	for i := 0; i < maxScans; i++ {
		var items []string
		var next uint64
		var err error
		if typ == "hash" {
			items, next, err = c.HScan(ctx, key, cursor, match, PageSize).Result()
		} else {
			items, next, err = c.SScan(ctx, key, cursor, match, PageSize).Result()
		}
		if err != nil {
			return err
		}
		if typ == "hash" {
			for j := 0; j+1 < len(items); j += 2 {
				pg.Elements = append(pg.Elements, Element{Index: -1, Name: part(items[j]), Value: part(items[j+1])})
			}
		} else {
			for _, m := range items {
				pg.Elements = append(pg.Elements, Element{Index: -1, Name: part(m)})
			}
		}
		cursor = next
		// Without a filter one call is a page; a filter may match little
		// of what a call walks, so a few more calls fill the page.
		if cursor == 0 || match == "" || len(pg.Elements) >= PageSize/2 {
			break
		}
	}
	if cursor != 0 {
		pg.Next = strconv.FormatUint(cursor, 10)
	}
	return nil
}

func readWindow(ctx context.Context, c *redis.Client, key, typ string, req Request, pg *Page) error {
	start := int64(0)
	if req.At != "" {
		n, err := strconv.ParseInt(req.At, 10, 64)
		if err != nil || n < 0 || strconv.FormatInt(n, 10) != req.At {
			return fmt.Errorf("%w: %q is not an offset", ErrCursor, req.At)
		}
		start = n
	}
	stop := start + PageSize - 1
	p := c.Pipeline()
	var length *redis.IntCmd
	var list *redis.StringSliceCmd
	var zs *redis.ZSliceCmd
	if typ == "list" {
		length = p.LLen(ctx, key)
		list = p.LRange(ctx, key, start, stop)
	} else {
		length = p.ZCard(ctx, key)
		zs = p.ZRangeWithScores(ctx, key, start, stop)
	}
	if _, err := p.Exec(ctx); err != nil {
		return err
	}
	pg.Length = length.Val()
	if list != nil {
		for i, v := range list.Val() {
			pg.Elements = append(pg.Elements, Element{Index: start + int64(i), Value: part(v)})
		}
	} else {
		for i, z := range zs.Val() {
			m, _ := z.Member.(string)
			pg.Elements = append(pg.Elements, Element{Index: start + int64(i), Name: part(m), Score: z.Score})
		}
	}
	if stop+1 < pg.Length {
		pg.Next = strconv.FormatInt(stop+1, 10)
	}
	if start > 0 {
		pg.Prev = strconv.FormatInt(max(0, start-PageSize), 10)
	}
	return nil
}

// validID reports a stream entry ID as XADD writes it: ms-seq.
func validID(s string) bool {
	ms, seq, ok := strings.Cut(s, "-")
	if !ok {
		return false
	}
	for _, d := range []string{ms, seq} {
		if n, err := strconv.ParseUint(d, 10, 64); err != nil || strconv.FormatUint(n, 10) != d {
			return false
		}
	}
	return true
}

func readStream(ctx context.Context, c *redis.Client, key string, req Request, pg *Page) error {
	start := "-"
	if req.At != "" {
		if !validID(strings.TrimPrefix(req.At, "(")) {
			return fmt.Errorf("%w: %q is not a stream entry ID", ErrCursor, req.At)
		}
		start = req.At
	}
	p := c.Pipeline()
	length := p.XLen(ctx, key)
	// One more than a page tells whether there is a next page.
	entries := p.XRangeN(ctx, key, start, "+", PageSize+1)
	if _, err := p.Exec(ctx); err != nil {
		return err
	}
	pg.Length = length.Val()
	es := entries.Val()
	more := len(es) > PageSize
	if more {
		es = es[:PageSize]
	}
	for _, e := range es {
		el := Element{Index: -1, Name: part(e.ID)}
		// go-redis hands the fields over as a map: sorted, a page reads
		// the same each time.
		for _, f := range slices.Sorted(maps.Keys(e.Values)) {
			s, _ := e.Values[f].(string)
			el.Fields = append(el.Fields, part(f), part(s))
			if len(el.Fields) >= 2*PageSize {
				break
			}
		}
		pg.Elements = append(pg.Elements, el)
	}
	if more {
		pg.Next = "(" + es[len(es)-1].ID
	}
	return nil
}
