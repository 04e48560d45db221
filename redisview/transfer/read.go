package transfer

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/views/format"
)

// Budget is the reader's share of a connection's scan budget
// (scanbudget.Tap): Take returns once keys more may be read, or with
// ctx's error, having taken nothing.
type Budget interface {
	Take(ctx context.Context, keys int64) error
}

// ReadLimits bound the reading of one key.
type ReadLimits struct {
	// Page is the COUNT of each HSCAN/SSCAN/XRANGE call and the length
	// of each ZRANGE/LRANGE page; Chunk the bytes of each GETRANGE of a
	// long string.
	Page  int64
	Chunk int64
	// A key of more elements (fields, members, entries) or more bytes
	// (names and values together) is not read: its line says it was
	// skipped, and why.
	MaxElements int64
	MaxBytes    int64
}

// DefaultReadLimits: pages of 500 elements, strings read 1 MB at a time;
// keys up to 1,000,000 elements and 64 MB.
var DefaultReadLimits = ReadLimits{Page: 500, Chunk: 1 << 20, MaxElements: 1_000_000, MaxBytes: 64 << 20}

// Reader reads the keys of one database, a page at a time.
type Reader struct {
	C      redis.UniversalClient // the database's client
	Limits ReadLimits            // zero: DefaultReadLimits
	// Budget, when set, is taken from for the work read: one unit a key
	// and a page after its first, plus one per 100 elements and per 64
	// KiB (work), taken before the read from the sizes Redis gave.
	Budget Budget
	// Withhold says why a key's value must not be read (a sensitive
	// family), or "".
	Withhold func(key string) string
}

// errTooBig ends a read that went past a cap.
type errTooBig struct{ why string }

func (e errTooBig) Error() string { return e.why }

func (rd *Reader) limits() ReadLimits {
	if rd.Limits == (ReadLimits{}) {
		return DefaultReadLimits
	}
	return rd.Limits
}

func (rd *Reader) take(ctx context.Context, units int64) error {
	if rd.Budget == nil || units <= 0 {
		return ctx.Err()
	}
	return rd.Budget.Take(ctx, units)
}

// Read reads one key; ok false when it does not exist. A key too large
// to read, or of a type export does not carry, comes back with Skipped
// set; a key of a sensitive family with Withheld set (its value not
// read).
func (rd *Reader) Read(ctx context.Context, key string) (r Record, ok bool, err error) {
	if err := rd.take(ctx, 1); err != nil {
		return r, false, err
	}
	heads, err := rd.heads(ctx, []string{key})
	if err != nil {
		return r, false, err
	}
	return rd.readHead(ctx, heads[0])
}

// heads reads the type and TTL of keys in one pipeline: the first of a
// record, the value read after it.
func (rd *Reader) heads(ctx context.Context, keys []string) ([]Record, error) {
	p := rd.C.Pipeline()
	typs := make([]*redis.StatusCmd, len(keys))
	ttls := make([]*redis.Cmd, len(keys))
	for i, k := range keys {
		// PTTL as an integer: go-redis's Duration overflows past 292 years.
		typs[i], ttls[i] = p.Type(ctx, k), p.Do(ctx, "pttl", k)
	}
	if _, err := p.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, err
	}
	out := make([]Record, len(keys))
	for i, k := range keys {
		out[i] = Record{Key: Bytes(k), Type: typs[i].Val()}
		if ms, _ := ttls[i].Int64(); ms > 0 {
			out[i].TTL = min(ms, MaxTTL)
		}
	}
	return out, nil
}

// readHead reads the value of a key whose head (type, TTL) was read.
func (rd *Reader) readHead(ctx context.Context, r Record) (Record, bool, error) {
	if r.Type == "none" || r.Type == "" {
		return r, false, nil
	}
	if rd.Withhold != nil {
		if why := rd.Withhold(string(r.Key)); why != "" {
			r.Withheld = why
			return r, true, nil
		}
	}
	err := rd.readValue(ctx, &r)
	var big errTooBig
	switch {
	case errors.As(err, &big):
		r.Skipped, err = big.why, nil
		r.clearValue()
	case errors.Is(err, redis.Nil), errors.Is(err, errGone):
		return r, false, nil
	}
	return r, err == nil, err
}

var errGone = errors.New("gone while read")

func (r *Record) clearValue() {
	r.String, r.Pairs, r.Items, r.Scored, r.Stream = "", nil, nil, nil, nil
}

func (rd *Reader) readValue(ctx context.Context, r *Record) error {
	key := string(r.Key)
	var sz sizing
	if r.Type != TypeString {
		var err error
		if sz, err = rd.sizing(ctx, key); err != nil {
			return err
		}
	}
	switch r.Type {
	case TypeString:
		return rd.readString(ctx, r)
	case TypeHash:
		return rd.readScan(ctx, r, sz, rd.C.HLen(ctx, key), func(cur uint64, n int64) *redis.ScanCmd { return rd.C.HScan(ctx, key, cur, "", n) })
	case TypeSet:
		return rd.readScan(ctx, r, sz, rd.C.SCard(ctx, key), func(cur uint64, n int64) *redis.ScanCmd { return rd.C.SScan(ctx, key, cur, "", n) })
	case TypeList:
		return rd.readList(ctx, r, sz)
	case TypeZSet:
		return rd.readZSet(ctx, r, sz)
	case TypeStream:
		return rd.readStream(ctx, r, sz)
	}
	return errTooBig{fmt.Sprintf("skipped: type %s is not exported (only string, hash, list, set, zset and stream)", r.Type)}
}

// tally counts what a read holds so far against the caps.
type tally struct {
	lim          ReadLimits
	elems, bytes int64
}

func (t *tally) size(n int64) error {
	if n > t.lim.MaxElements {
		return errTooBig{fmt.Sprintf("skipped: larger than %s elements (%s)", format.Count(t.lim.MaxElements), format.Count(n))}
	}
	return nil
}

func (t *tally) add(elems int64, bytes ...string) error {
	t.elems += elems
	for _, b := range bytes {
		t.bytes += int64(len(b))
	}
	if err := t.size(t.elems); err != nil {
		return err
	}
	if t.bytes > t.lim.MaxBytes {
		return errTooBig{"skipped: larger than " + format.Bytes(t.lim.MaxBytes)}
	}
	return nil
}

func (rd *Reader) readString(ctx context.Context, r *Record) error {
	key := string(r.Key)
	lim := rd.limits()
	n, err := rd.C.StrLen(ctx, key).Result()
	if err != nil {
		return err
	}
	if n > lim.MaxBytes {
		return errTooBig{fmt.Sprintf("skipped: larger than %s (%s)", format.Bytes(lim.MaxBytes), format.Bytes(n))}
	}
	if n <= lim.Chunk {
		if err := rd.take(ctx, work(0, n)); err != nil {
			return err
		}
		s, err := rd.C.Get(ctx, key).Result()
		r.String = Bytes(s)
		return err
	}
	buf := make([]byte, 0, n)
	for off := int64(0); off < n; off += lim.Chunk {
		if err := rd.take(ctx, work(0, min(lim.Chunk, n-off))+min(off, 1)); err != nil {
			return err
		}
		s, err := rd.C.GetRange(ctx, key, off, off+lim.Chunk-1).Result()
		if err != nil {
			return err
		}
		buf = append(buf, s...)
		if int64(len(s)) < lim.Chunk {
			break // shorter since STRLEN: what is there now
		}
	}
	r.String = Bytes(buf)
	return nil
}

// readScan reads a hash or a set with HSCAN/SSCAN: an element a rehash
// returns twice is kept once.
func (rd *Reader) readScan(ctx context.Context, r *Record, sz sizing, card *redis.IntCmd, scan func(uint64, int64) *redis.ScanCmd) error {
	t := tally{lim: rd.limits()}
	n, err := card.Result()
	if err != nil {
		return err
	}
	if n == 0 {
		return errGone
	}
	if err := t.size(n); err != nil {
		return err
	}
	seen := map[string]bool{}
	count, cost := rd.pageLen(sz, n)
	var cur uint64
	for first := true; first || cur != 0; first = false {
		if err := rd.take(ctx, cost+boolUnit(!first)); err != nil {
			return err
		}
		var page []string
		if page, cur, err = scan(cur, count).Result(); err != nil {
			return err
		}
		if err := rd.addScanned(r, &t, seen, page); err != nil {
			return err
		}
	}
	return nil
}

func (rd *Reader) addScanned(r *Record, t *tally, seen map[string]bool, page []string) error {
	step := 1
	if r.Type == TypeHash {
		step = 2
	}
	for i := 0; i+step <= len(page); i += step {
		if seen[page[i]] {
			continue
		}
		seen[page[i]] = true
		if err := t.add(1, page[i:i+step]...); err != nil {
			return err
		}
		if step == 2 {
			r.Pairs = append(r.Pairs, Pair{Field: Bytes(page[i]), Value: Bytes(page[i+1])})
		} else {
			r.Items = append(r.Items, Bytes(page[i]))
		}
	}
	return nil
}

// pages calls read for [start, start+page) until a page comes back short.
func (rd *Reader) pages(ctx context.Context, sz sizing, n int64, read func(start, stop int64) (int, error)) error {
	page, cost := rd.pageLen(sz, n)
	for start := int64(0); ; start += page {
		if err := rd.take(ctx, cost+boolUnit(start > 0)); err != nil {
			return err
		}
		got, err := read(start, start+page-1)
		if err != nil || int64(got) < page {
			return err
		}
	}
}

func (rd *Reader) readList(ctx context.Context, r *Record, sz sizing) error {
	key := string(r.Key)
	t := tally{lim: rd.limits()}
	n, err := rd.C.LLen(ctx, key).Result()
	if err != nil || n == 0 {
		return cmp(err, errGone)
	}
	if err := t.size(n); err != nil {
		return err
	}
	return rd.pages(ctx, sz, n, func(start, stop int64) (int, error) {
		vs, err := rd.C.LRange(ctx, key, start, stop).Result()
		for _, v := range vs {
			if err := t.add(1, v); err != nil {
				return 0, err
			}
			r.Items = append(r.Items, Bytes(v))
		}
		return len(vs), err
	})
}

func (rd *Reader) readZSet(ctx context.Context, r *Record, sz sizing) error {
	key := string(r.Key)
	t := tally{lim: rd.limits()}
	n, err := rd.C.ZCard(ctx, key).Result()
	if err != nil || n == 0 {
		return cmp(err, errGone)
	}
	if err := t.size(n); err != nil {
		return err
	}
	return rd.pages(ctx, sz, n, func(start, stop int64) (int, error) {
		zs, err := rd.C.ZRangeWithScores(ctx, key, start, stop).Result()
		for _, z := range zs {
			m, _ := z.Member.(string)
			if err := t.add(1, m); err != nil {
				return 0, err
			}
			r.Scored = append(r.Scored, Scored{Member: Bytes(m), Score: z.Score})
		}
		return len(zs), err
	})
}

// cmp is err, or alt when err is nil.
func cmp(err, alt error) error {
	if err != nil {
		return err
	}
	return alt
}
