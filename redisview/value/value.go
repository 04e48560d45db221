// Package value reads what a key holds, by its type, one bounded page at a
// time: never a whole key of unknown size. Strings are read up to
// MaxString bytes (GETRANGE); hashes and sets by HSCAN/SSCAN pages with
// COUNT (a filter goes to MATCH, glob-escaped); lists, sorted sets and
// streams by windows (LRANGE, ZRANGE by rank or by score window WITHSCORES,
// XRANGE or XREVRANGE COUNT). A collection's window is read by one
// read-only Lua script that cuts every element to MaxPart bytes inside the
// server and returns its full byte length, so no element over the cut
// crosses the wire; a server that refuses scripts is read with the same
// commands, elements cut on arrival, and only when bounded. A page holds
// at most PageSize elements and about 64 KiB of text. OBJECT ENCODING
// rides along in the same round trip.
//
// A key of a sensitive family is never read: Read returns a Page that says
// it was withheld, with no value in it.
package value

import (
	"context"
	"errors"
	"fmt"
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

// ErrCursor: the page position or an option does not fit the key's type
// (a stream ID for a list, a negative offset, a score that is not a
// number) — a malformed request. Its errors say what is wrong.
var ErrCursor = errors.New("bad page position")

// requestError is an ErrCursor that says only what is wrong.
type requestError struct{ msg string }

func (e requestError) Error() string        { return e.msg }
func (e requestError) Is(target error) bool { return target == ErrCursor }

func badRequest(format string, args ...any) error {
	return requestError{fmt.Sprintf(format, args...)}
}

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
	// Desc reads a stream newest first (XREVRANGE); At is then the
	// highest ID of the page.
	Desc bool
	// Min and Max make a sorted set's page a score window (either may be
	// "": -inf, +inf): a number, -inf or +inf, "(" before it for an
	// exclusive bound. At is then the offset in the window.
	Min, Max string
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
	// FieldCount is how many fields the stream entry has (Fields may hold
	// fewer: at most PageSize pairs).
	FieldCount int64
}

// Page is one bounded page of a key's value.
type Page struct {
	Key  string
	Type string
	// Withheld: the key's family is sensitive; nothing was read.
	Withheld bool
	// Length is the string's byte length or the collection's element count.
	Length int64
	// String is MaxString bytes (at most) of a string value, from Offset
	// (the request's At, a byte offset; 0 is the start).
	String string
	Offset int64
	// Elements of a collection, in the order Redis returned them.
	Elements []Element
	// At is where this page started; Next where the next one starts (""
	// at the end); Prev where the previous window starts (windows only,
	// "" at the start). Scans cannot go back: their Prev is "".
	At, Next, Prev string
	// Filter is the filter the page applied.
	Filter string
	// Last is where the last window starts (lists, sorted sets), "" when
	// this is it or there is one window.
	Last string
	// Scanned: hash and set pages come from a scan, whose pages may repeat
	// an element and whose sizes vary.
	Scanned bool
	// Capped: the server answered one scan call with more elements than a
	// page keeps (a listpack hash or set comes whole whatever COUNT asks);
	// the page kept PageSize of them and Next resumes after the last kept.
	Capped bool
	// Desc: a stream read newest first.
	Desc bool
	// ByScore: a sorted set's score window [Min, Max] (as sent to Redis)
	// holding InWindow members, the first of them at rank FirstRank (-1
	// when the window is empty). Element indexes are ranks.
	ByScore   bool
	Min, Max  string
	InWindow  int64
	FirstRank int64
	// Encoding is OBJECT ENCODING's answer, "" when the server would not
	// say (the embedded demo does not know the command).
	Encoding string
	// Path is how the page was read: "lua" (elements cut inside Redis) or
	// "commands".
	Path string

	start int64 // the window's offset (lists, sorted sets)
}

// ErrTooLarge: the collection's elements are too big to page through here
// (a page would pull megabytes from Redis before cutting them).
var ErrTooLarge = errors.New("elements too large to show")

// Bounds on what one page of a collection may pull from Redis when scripts
// are refused and elements are cut after they arrive (the script cuts them
// inside the server): a page of a list of 10 MB items would carry a
// gigabyte.
const (
	// maxMeasured is the most elements a collection may have for its exact
	// size to be measured (MEMORY USAGE … SAMPLES 0 walks every element).
	maxMeasured = 1000
	// maxPageBytes is the most a collection measured exactly may hold to be
	// paged: any page of it is smaller.
	maxPageBytes = 8 << 20
)

// bounded refuses to page, with plain commands, a collection whose
// elements could be huge; it returns the key's encoding ("" when the
// server will not say). A compact encoding (listpack, ziplist, intset)
// holds only elements under the server's small-value thresholds (64 bytes
// by default); any other collection of up to maxMeasured elements is
// measured exactly. A larger collection of another encoding cannot be
// measured without walking it all; it is paged (its elements arrive whole,
// then are cut).
func bounded(ctx context.Context, c redis.UniversalClient, key, typ string) (string, error) {
	var enc *redis.StringCmd
	n := redis.NewIntCmd(ctx, lengthCommand(typ), key)
	_, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		enc = p.ObjectEncoding(ctx, key)
		_ = p.Process(ctx, n)
		return nil
	})
	if redisview.IsConnErr(err) {
		return "", err
	}
	e := enc.Val() // "" when OBJECT is refused: measured below
	switch e {
	case "listpack", "ziplist", "intset":
		return e, nil
	}
	if n.Err() != nil || n.Val() > maxMeasured {
		return e, nil
	}
	mem, err := c.MemoryUsage(ctx, key, 0).Result()
	switch {
	case err != nil:
		return e, nil // gone, or the server will not say (ACL, an old server): paged as before
	case mem > maxPageBytes:
		return e, fmt.Errorf("%w: its %d elements take %d bytes in memory and this server refuses Keydeck's scripts, which cut elements inside Redis; without them Keydeck pages only collections it can bound (up to %d bytes)", ErrTooLarge, n.Val(), mem, maxPageBytes)
	}
	return e, nil
}

func lengthCommand(typ string) string {
	return map[string]string{"hash": "hlen", "set": "scard", "list": "llen", "zset": "zcard", "stream": "xlen"}[typ]
}

// Read reads one page of key in database db of conn.
func Read(ctx context.Context, conn *redisview.Conn, db int, key string, req Request) (Page, error) {
	pg := Page{Key: key, At: req.At, Filter: req.Filter, Desc: req.Desc}
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
	if err := checkRequest(typ, req); err != nil {
		return pg, err
	}
	var w window
	var err error
	switch typ {
	case "none":
		return pg, nil
	case "string":
		off, err := offset(req.At)
		if err != nil {
			return pg, err
		}
		pg.Offset = off
		if err := readString(ctx, c, key, &pg); err != nil {
			return pg, conn.WrapErr(redisview.ReadError("reading a key's value", err))
		}
		return pg, nil
	case "hash", "set":
		w, err = scanWindow(typ, req, &pg)
	case "list":
		w, err = rankWindow("lrange", req, &pg)
	case "zset":
		if req.Min != "" || req.Max != "" {
			w, err = scoreWindow(req, &pg)
		} else {
			w, err = rankWindow("zrank", req, &pg)
		}
	case "stream":
		w, err = streamWindow(req, &pg)
	default:
		return pg, fmt.Errorf("Keydeck cannot show a value of type %q", typ)
	}
	if err != nil {
		return pg, err
	}
	r, err := readWindow(ctx, conn, c, key, typ, w)
	if errors.Is(err, ErrTooLarge) {
		return pg, err
	}
	if err == nil {
		err = pg.fill(w, r)
	}
	if err != nil {
		return pg, conn.WrapErr(redisview.ReadError("reading a key's value", err))
	}
	return pg, nil
}

// checkRequest refuses options that do not fit the key's type.
func checkRequest(typ string, req Request) error {
	if typ == "none" {
		return nil // gone: the page says so
	}
	if req.Desc && typ != "stream" {
		return badRequest("newest first is for streams, and this key is a %s", typ)
	}
	if (req.Min != "" || req.Max != "") && typ != "zset" {
		return badRequest("a score window is for sorted sets, and this key is a %s", typ)
	}
	if req.Filter != "" && typ != "hash" && typ != "set" {
		return badRequest("a filter is for hashes and sets, and this key is a %s", typ)
	}
	return nil
}

func readString(ctx context.Context, c redis.UniversalClient, key string, pg *Page) error {
	var n *redis.IntCmd
	var s, enc *redis.StringCmd
	_, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		n = p.StrLen(ctx, key)
		s = p.GetRange(ctx, key, pg.Offset, pg.Offset+MaxString-1)
		enc = p.ObjectEncoding(ctx, key)
		return nil
	})
	if redisview.IsConnErr(err) {
		return err
	}
	if err := n.Err(); err != nil {
		return err
	}
	if err := s.Err(); err != nil {
		return err
	}
	pg.Length, pg.String = n.Val(), s.Val()
	pg.Encoding = enc.Val()
	pg.Path = "commands"
	return nil
}

// fill turns a window's reply into the page.
func (pg *Page) fill(w window, r reply) error {
	pg.Encoding, pg.Path = r.enc, r.path
	if len(r.head) == 0 {
		return badReply("no length")
	}
	n, ok := num(r.head[0])
	if !ok {
		return badReply("length is not an integer")
	}
	pg.Length = n
	ps := &cursorParts{items: r.parts}
	head := func(i int) any {
		if i < len(r.head) {
			return r.head[i]
		}
		return nil
	}
	switch w.mode {
	case "hscan", "sscan":
		for ps.more() {
			e := Element{Index: -1, Name: ps.part()}
			if w.mode == "hscan" {
				e.Value = ps.part()
			}
			pg.Elements = append(pg.Elements, e)
		}
		if cur := str(head(1)); cur != "0" && cur != "" {
			pg.Next = cur
			pg.Capped = strings.Contains(cur, ":")
		}
	case "lrange", "zrank", "zscore":
		first := pg.start
		end := pg.Length // where the window ends, in ranks
		if w.mode == "zscore" {
			in, _ := num(head(1))
			r0, _ := num(head(2))
			pg.InWindow, pg.FirstRank = in, r0
			first, end = r0+pg.start, in
		}
		for i := int64(0); ps.more(); i++ {
			e := Element{Index: first + i}
			if w.mode == "lrange" {
				e.Value = ps.part()
			} else {
				e.Name = ps.part()
				e.Score = ps.score()
			}
			pg.Elements = append(pg.Elements, e)
		}
		if pg.start+PageSize < end {
			pg.Next = strconv.FormatInt(pg.start+PageSize, 10)
		}
		if pg.start > 0 {
			pg.Prev = strconv.FormatInt(max(0, pg.start-PageSize), 10)
		}
		if end > PageSize {
			last := (end - 1) / PageSize * PageSize
			if last != pg.start {
				pg.Last = strconv.FormatInt(last, 10)
			}
		}
	case "xrange", "xrev":
		for ps.more() {
			e := Element{Index: -1, Name: Part{Bytes: str(ps.raw())}}
			e.Name.Len = len(e.Name.Bytes)
			keep := ps.int()
			e.FieldCount = ps.int() / 2
			for j := int64(0); j < keep && ps.err == nil; j++ {
				e.Fields = append(e.Fields, ps.part())
			}
			pg.Elements = append(pg.Elements, e)
		}
		if more, _ := num(head(1)); more == 1 && len(pg.Elements) > 0 {
			pg.Next = "(" + pg.Elements[len(pg.Elements)-1].Name.Bytes
		}
		pg.Prev = str(head(2))
	}
	return ps.err
}
