package decode

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/schema"
)

// A row is a limit or lock key as the limits sweep keeps it: each role of
// class limit or lock registers, in its own file, a cheap read of its row
// (a few O(1), bounded commands, queued with every other row's on one
// pipeline) and the row's state, whose At says the row's moment at any
// later time without reading again.

// Moment is a limit or lock row at one moment: what the Rate limits and
// Locks pages show of it.
type Moment struct {
	Used, Limit float64 // tokens taken of capacity, count or events of the limit
	Tokens      float64 // token buckets: tokens left now
	Count       int64   // counted limits: the count (events in the window) as read
	Throttled   bool    // the next request is refused (or the login is locked)
	Locked      bool    // a sliding window's lock is present; a lock is held
	Until       time.Time
	ResetsIn    time.Duration // until the limit lifts or the bucket is full; 0 unknown
	TTL         time.Duration // Lock/Cooldown: left now; negative: none
	Age         time.Duration // Lock: since it was taken, from the pack's TTL; 0 unknown
	NoTTL       bool          // Lock/Cooldown: a violation, it never expires
	// OverMax: Lock/Cooldown: a violation, the TTL left exceeds the
	// family's maximum (taken with a longer TTL than the pack says).
	OverMax bool
	Gone    bool // the key expired since it was read
	// Holder: Lock/Cooldown: the start of the value (never of a sensitive
	// family); HolderCut when the value is longer.
	Holder    string
	HolderCut bool
}

// Since is what a row's At needs beyond the row's state: its family, when
// it was read and its TTL then, and the time asked about.
type Since struct {
	Family *schema.Family
	ReadAt time.Time
	PTTL   time.Duration // at ReadAt; negative: no expiry
	Now    time.Time
}

// Elapsed is the time since the read (never negative).
func (s Since) Elapsed() time.Duration { return max(0, s.Now.Sub(s.ReadAt)) }

// Gone reports that the key's TTL ran out since the read.
func (s Since) Gone() bool { return s.PTTL > 0 && s.Elapsed() >= s.PTTL }

// Left is ttl (measured at the read) run on to Now; a negative ttl (none)
// stays as it is.
func (s Since) Left(ttl time.Duration) time.Duration {
	if ttl < 0 {
		return ttl
	}
	return max(0, ttl-s.Elapsed())
}

// RowState is a row's state as read; At is the row at s.Now (pure: no
// read). It starts from Moment{Gone: s.Gone()}.
type RowState interface {
	At(s Since) Moment
}

// rowStep queues a row's read on p (O(1), bounded commands; never a value
// of a sensitive family: it is not called for one) and says how to build
// the row's state from the replies.
type rowStep func(ctx context.Context, p redis.Pipeliner, in *Input) func() (RowState, error)

// rowRole is one role's row reader. ttlOnly is the state of a key of a
// sensitive family, read by its TTL alone (a lock: held, its holder not
// shown); nil when such a row cannot be told (a limit: it says so).
type rowRole struct {
	read    rowStep
	ttlOnly RowState
}

var rowRegistry = map[schema.Role]rowRole{}

// registerRow adds a role's row reader; the role's file calls it from its
// init, next to register.
func registerRow(r schema.Role, read rowStep, ttlOnly RowState) {
	if _, dup := rowRegistry[r]; dup {
		panic("decode: row of role " + string(r) + " registered twice")
	}
	rowRegistry[r] = rowRole{read: read, ttlOnly: ttlOnly}
}

// TTLState is what a row of family f is by its TTL alone, its value not
// read (sensitive) or not readable as its role says (the row's Err): a
// lock is still held, and without a TTL held past it. Nil for roles whose
// rows say nothing without their value (a limit).
func TTLState(f *schema.Family) RowState {
	if f == nil {
		return nil
	}
	return rowRegistry[f.Role].ttlOnly
}

// Row is one limit or lock key read by ReadRows.
type Row struct {
	PTTL  time.Duration // -2: the key is gone; -1: no expiry
	State RowState      // nil when the row could not be read (Err) or is gone
	Err   string        // why the value could not be read as its role says
}

// ReadRows reads the rows of items (keys of database db) at now in one
// pipeline: each role's row read, and every key's PTTL. A key of the
// wrong type or shape is a Row with Err; a connection error is returned.
func ReadRows(ctx context.Context, c redis.Cmdable, db int, items []Item, now time.Time) ([]Row, error) {
	if len(items) == 0 {
		return nil, nil
	}
	pipe := c.Pipeline()
	type queued struct {
		fin  func() (RowState, error)
		pttl *redis.DurationCmd
	}
	qs := make([]queued, len(items))
	for i, it := range items {
		f := it.Match.Family
		if rr, ok := rowRegistry[f.Role]; ok && !f.Sensitive {
			qs[i].fin = rr.read(ctx, pipe, &Input{Key: it.Key, Match: it.Match, Env: Env{DB: db}, Now: now})
		}
		qs[i].pttl = pipe.PTTL(ctx, it.Key)
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		if redisview.IsConnErr(err) || ctx.Err() != nil {
			return nil, err
		}
		// A key of the wrong type answers WRONGTYPE: that row says so.
	}
	out := make([]Row, len(items))
	for i, it := range items {
		out[i] = finishRow(it.Match.Family, qs[i].pttl, qs[i].fin)
	}
	return out, nil
}

// finishRow is one row from its PTTL and its role's finish.
func finishRow(f *schema.Family, pttl *redis.DurationCmd, fin func() (RowState, error)) Row {
	r := Row{PTTL: pttl.Val()}
	if pttl.Err() == nil && r.PTTL == -2 {
		return r
	}
	if r.PTTL < 0 {
		r.PTTL = -1
	}
	rr, ok := rowRegistry[f.Role]
	switch {
	case !ok:
		r.Err = "the role " + string(f.Role) + " has no row reader"
	case f.Sensitive && rr.ttlOnly == nil:
		r.Err = "sensitive: the value is not read"
	case f.Sensitive:
		r.State = rr.ttlOnly
	default:
		st, err := fin()
		switch {
		case errors.Is(err, ErrNotDecodable):
			r.Err = strings.TrimPrefix(err.Error(), ErrNotDecodable.Error()+": ")
		case err != nil:
			r.Err = err.Error()
		default:
			r.State = st
		}
	}
	return r
}

// rowNumber parses a number from an HMGET reply, spaces around it allowed.
func rowNumber(v any) (float64, bool) {
	s, ok := v.(string)
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return f, err == nil
}

// countBytes is how much of a counter's value a row reads: an int64 is
// at most 20 digits.
const countBytes = 32

// readCountRow reads a counter's value (its first countBytes) as an
// integer; build makes the row's state from it.
func readCountRow(build func(n int64) RowState) rowStep {
	return func(ctx context.Context, p redis.Pipeliner, in *Input) func() (RowState, error) {
		val := p.GetRange(ctx, in.Key, 0, countBytes-1)
		return func() (RowState, error) {
			if err := firstErr(val); err != nil {
				return nil, err
			}
			n, err := strconv.ParseInt(strings.TrimSpace(val.Val()), 10, 64)
			if err != nil {
				return nil, notDecodable("the value is not an integer count")
			}
			return build(n), nil
		}
	}
}

// countAt is a counted limit at s: count against limit (throttled: at
// it), its window ending with the key's TTL; nothing used once it is gone.
func countAt(s Since, count, limit int64, throttled bool) Moment {
	m := Moment{Gone: s.Gone(), Count: count, Limit: float64(limit), Used: float64(count), Throttled: throttled}
	if s.PTTL > 0 {
		m.ResetsIn = s.Left(s.PTTL)
	}
	if m.Gone {
		m.Used, m.Throttled, m.ResetsIn = 0, false, 0
	}
	return m
}
