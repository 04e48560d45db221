// Package browse lists one database's keys of a family, or the keys no
// family matches that start with a prefix, one bounded page at a time: a
// SCAN walk with MATCH (and TYPE) that stops after a page of keys or a
// budget of SCAN calls, whichever comes first, then one pipelined read of
// the page's keys. It never sends KEYS.
package browse

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/schema"
)

// Defaults of a page: at most PageKeys keys, after at most MaxScans SCAN
// calls of COUNT Count each.
const (
	PageKeys = 50
	MaxScans = 20
	Count    = 200
)

// ErrCursor: a page position (?at=) that is not one this package wrote.
var ErrCursor = errors.New("bad page position")

// Cursor is where a page starts: a SCAN cursor, and how many of the keys
// of this list that SCAN call returns were on the page before (a SCAN
// reply may hold more keys than a page; asking the same cursor again gives
// the same reply while the database does not change).
type Cursor struct {
	Scan redisview.Cursor // "" at the start
	Skip int
}

// String is the cursor as ?at= carries it: "CURSOR" or "CURSOR.SKIP";
// "" is the start.
func (c Cursor) String() string {
	switch {
	case c.Skip > 0 && c.Scan.Done():
		return "0." + strconv.Itoa(c.Skip)
	case c.Skip > 0:
		return string(c.Scan) + "." + strconv.Itoa(c.Skip)
	case c.Scan.Done():
		return ""
	default:
		return string(c.Scan)
	}
}

// ParseCursor reads a Cursor's String.
func ParseCursor(s string) (Cursor, error) {
	if s == "" {
		return Cursor{}, nil
	}
	scan, skip, dotted := strings.Cut(s, ".")
	var c Cursor
	var err error
	if c.Scan, err = redisview.ParseCursor(scan); err != nil {
		return Cursor{}, fmt.Errorf("%w %q", ErrCursor, s)
	}
	if dotted {
		if c.Skip, err = strconv.Atoi(skip); err != nil || c.Skip < 1 || c.Skip > 1<<20 {
			return Cursor{}, fmt.Errorf("%w %q", ErrCursor, s)
		}
	}
	return c, nil
}

// Request names a list and a page of it.
type Request struct {
	// Family lists its keys; nil lists the keys no family of Classifier
	// matches that start with Prefix ("" for every such key).
	Family *schema.Family
	Prefix string
	// Pattern, when set (Family nil), lists every key SCAN MATCH Pattern
	// finds, whatever its family.
	Pattern string
	// Flat keeps, of a prefix list, only the keys with no ':' after the
	// prefix: the database page's group "a:*" is the keys "a:x", not
	// "a:b:x" (group "a:b:*"), and its "(no colon)" group is Prefix ""
	// and Flat.
	Flat bool
	// Classifier is the connection's; it decides which keys belong.
	Classifier *schema.Classifier
	At         Cursor
	// Zero values take the defaults.
	PageKeys, MaxScans, Count int
	// Budget, when set, is the caller's share of the connection's scan
	// budget: each step takes Count keys for each node it scans (each
	// primary of a cluster) from it first, waiting at most BudgetWait (0: DefaultBudgetWait); the walk stops as on
	// MaxScans when none came.
	Budget     Budget
	BudgetWait time.Duration
}

// Budget is one identity's share of a connection's scan budget
// (scanbudget.Tap): Take returns once keys more may be scanned, or with
// ctx's error, having taken nothing.
type Budget interface {
	Take(ctx context.Context, keys int64) error
}

// DefaultBudgetWait bounds a list's wait for scan budget per SCAN call.
const DefaultBudgetWait = 2 * time.Second

// Walk is how a list finds its keys: the MATCH pattern and TYPE sent with
// every SCAN call.
type Walk struct {
	Match string
	Type  string // "" sends no TYPE
	// WholeDB: the pattern has no literal prefix, so the walk goes through
	// every key of the database (Match narrows only what SCAN returns).
	WholeDB bool
}

// WalkOf is the walk of a request's list.
func WalkOf(req Request) Walk {
	if req.Family == nil && req.Pattern != "" {
		return Walk{Match: req.Pattern, WholeDB: req.Pattern[0] == '*' || req.Pattern[0] == '?' || req.Pattern[0] == '['}
	}
	if req.Family == nil {
		return Walk{Match: schema.EscapeGlob(req.Prefix) + "*", WholeDB: req.Prefix == ""}
	}
	w := Walk{Type: req.Family.Type}
	if p := req.Family.Pattern.LiteralPrefix(); p != "" {
		w.Match = schema.EscapeGlob(p) + "*"
	} else {
		w.Match, w.WholeDB = "*"+schema.EscapeGlob(req.Family.Pattern.LongestLiteral())+"*", true
	}
	return w
}

// Key is one key of a page.
type Key struct {
	Name string
	// Match holds the placeholder values (zero for a prefix list).
	Match schema.Match
	Info
}

// Info is what one pipelined read says of a key.
type Info struct {
	Type string        // "" when the key is gone
	TTL  time.Duration // -1: no expiry
	Size int64         // STRLEN, HLEN, LLEN, SCARD, ZCARD or XLEN; -1 when unknown
}

// Page is one page of a list.
type Page struct {
	Walk Walk
	Keys []Key
	// Next is where the next page starts; meaningless when End.
	Next Cursor
	// End: the walk came back to SCAN cursor 0, the end of the database.
	End bool
	// Budget: the walk stopped after MaxScans calls with room left on the
	// page; the next page continues the walk.
	Budget   bool
	Scans    int // SCAN calls made
	Returned int // keys those calls returned (before classification)
	// Skipped counts keys of the list the first SCAN reply held that
	// earlier pages showed (Cursor.Skip).
	Skipped int
}

func (r *Request) defaults() {
	if r.PageKeys <= 0 {
		r.PageKeys = PageKeys
	}
	if r.MaxScans <= 0 {
		r.MaxScans = MaxScans
	}
	if r.Count <= 0 {
		r.Count = Count
	}
}

// belongs reports whether key is on the list, with its match.
func (r *Request) belongs(db int, key string) (schema.Match, bool) {
	m, ok := r.Classifier.Match(db, key)
	if r.Family == nil && r.Pattern != "" {
		return m, true // SCAN MATCH chose it
	}
	if r.Family != nil {
		return m, ok && m.Family == r.Family
	}
	if ok || !strings.HasPrefix(key, r.Prefix) {
		return schema.Match{}, false
	}
	return schema.Match{}, !r.Flat || !strings.Contains(key[len(r.Prefix):], ":")
}

// List reads one page of a list: a bounded SCAN walk, then one pipelined
// read of the page's keys.
func List(ctx context.Context, conn *redisview.Conn, db int, req Request) (Page, error) {
	if req.Classifier == nil {
		return Page{}, errors.New("browse: no classifier")
	}
	req.defaults()
	c := conn.DB(db)
	pg := Page{Walk: WalkOf(req)}
	cur, skip := req.At.Scan, req.At.Skip
	pg.Next = req.At
	for pg.Scans < req.MaxScans {
		if req.Budget != nil {
			wait := req.BudgetWait
			if wait <= 0 {
				wait = DefaultBudgetWait
			}
			// A step scans Count keys on each node it reaches (each
			// primary of a cluster).
			width, err := redisview.StepWidth(ctx, c, cur)
			if err != nil {
				return Page{}, scanErr(conn, err)
			}
			wctx, cancel := context.WithTimeout(ctx, wait)
			err = req.Budget.Take(wctx, int64(req.Count)*int64(width))
			cancel()
			if ctx.Err() != nil {
				return Page{}, redisview.ReadError("waiting for scan budget", ctx.Err())
			}
			if err != nil {
				break // the budget's share is spent for now: continue later
			}
		}
		keys, next, err := redisview.ScanStep(ctx, c, cur, pg.Walk.Match, int64(req.Count), pg.Walk.Type)
		if err != nil {
			return Page{}, scanErr(conn, err)
		}
		pg.Scans++
		pg.Returned += len(keys)
		var matched []Key
		for _, k := range keys {
			if m, ok := req.belongs(db, k); ok {
				matched = append(matched, Key{Name: k, Match: m})
			}
		}
		done := min(skip, len(matched))
		pg.Skipped += done
		matched = matched[done:]
		if room := req.PageKeys - len(pg.Keys); len(matched) > room {
			pg.Keys = append(pg.Keys, matched[:room]...)
			pg.Next = Cursor{Scan: cur, Skip: done + room}
			return read(ctx, conn, db, pg)
		}
		pg.Keys = append(pg.Keys, matched...)
		cur, skip = next, 0
		if cur.Done() {
			cur = ""
		}
		pg.Next = Cursor{Scan: cur}
		if cur == "" {
			pg.End = true
			return read(ctx, conn, db, pg)
		}
		if len(pg.Keys) == req.PageKeys {
			return read(ctx, conn, db, pg)
		}
	}
	pg.Budget = true
	return read(ctx, conn, db, pg)
}

// scanErr is a failed SCAN step's error: a bad position (of another kind
// of deployment) is the request's, anything else a read error.
func scanErr(conn *redisview.Conn, err error) error {
	if errors.Is(err, redisview.ErrBadCursor) {
		return fmt.Errorf("%w: %w", ErrCursor, err)
	}
	return conn.WrapErr(redisview.ReadError("walking the database with SCAN", err))
}

func read(ctx context.Context, conn *redisview.Conn, db int, pg Page) (Page, error) {
	names := make([]string, len(pg.Keys))
	for i, k := range pg.Keys {
		names[i] = k.Name
	}
	infos, err := Read(ctx, conn, db, names, pg.Walk.Type)
	if err != nil {
		return Page{}, err
	}
	for i := range pg.Keys {
		pg.Keys[i].Info = infos[i]
	}
	return pg, nil
}

// Read reads type, TTL and size of keys: one pipeline of TYPE, PTTL and the
// O(1) length command of typ (the family's type), and a second trip only
// for keys of another type (or all of them when typ is ""). The live list
// calls it every tick on the keys of its page, with no new SCAN.
func Read(ctx context.Context, conn *redisview.Conn, db int, keys []string, typ string) ([]Info, error) {
	out := make([]Info, len(keys))
	if len(keys) == 0 {
		return out, nil
	}
	c := conn.DB(db)
	types := make([]*redis.StatusCmd, len(keys))
	ttls := make([]*redis.DurationCmd, len(keys))
	lens := make([]*redis.IntCmd, len(keys))
	cmds, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range keys {
			types[i] = p.Type(ctx, k)
			ttls[i] = p.PTTL(ctx, k)
			lens[i] = redisview.LengthCmd(ctx, p, typ, k)
		}
		return nil
	})
	if err := redisview.PipelineErr(cmds, err); err != nil {
		return nil, conn.WrapErr(redisview.ReadError("reading the keys of the page", err))
	}
	var again []int
	for i := range keys {
		t, err := types[i].Result()
		if err != nil {
			return nil, conn.WrapErr(redisview.ReadError("TYPE", err))
		}
		d, err := ttls[i].Result()
		if err != nil {
			return nil, conn.WrapErr(redisview.ReadError("PTTL", err))
		}
		info := Info{TTL: -1, Size: -1}
		if t != "none" {
			info.Type = t
			if d >= 0 {
				info.TTL = d
			}
		}
		switch {
		case info.Type == "":
		case info.Type == typ && lens[i] != nil:
			if n, err := lens[i].Result(); err == nil {
				info.Size = n
			}
		default:
			again = append(again, i)
		}
		out[i] = info
	}
	if len(again) == 0 {
		return out, nil
	}
	lens2 := make([]*redis.IntCmd, len(again))
	cmds, err = c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for j, i := range again {
			lens2[j] = redisview.LengthCmd(ctx, p, out[i].Type, keys[i])
		}
		return nil
	})
	if err := redisview.PipelineErr(cmds, err); err != nil {
		return nil, conn.WrapErr(redisview.ReadError("reading the sizes of the page's keys", err))
	}
	for j, i := range again {
		if lens2[j] == nil {
			continue
		}
		if n, err := lens2[j].Result(); err == nil {
			out[i].Size = n
		}
	}
	return out, nil
}
