package transfer

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// readStream reads a stream's entries with XRANGE … COUNT, each page
// starting after the last ID of the one before, and the ID the stream
// last generated (XINFO STREAM, whose entries part is two entries).
// Entries are read raw: go-redis's XMessage holds fields in a map, which
// loses their order and repeated fields.
func (rd *Reader) readStream(ctx context.Context, r *Record, sz sizing) error {
	key := string(r.Key)
	t := tally{lim: rd.limits()}
	n, err := rd.C.XLen(ctx, key).Result()
	if err != nil {
		return err
	}
	if err := t.size(n); err != nil {
		return err
	}
	s := &Stream{}
	count, cost := rd.pageLen(sz, n)
	start := "-"
	for {
		if err := rd.take(ctx, cost+boolUnit(start != "-")); err != nil {
			return err
		}
		page, err := rd.C.Do(ctx, "xrange", key, start, "+", "count", count).Slice()
		if err != nil {
			return err
		}
		for _, e := range page {
			ent, err := entryOf(e)
			if err != nil {
				return err
			}
			bs := []string{ent.ID}
			for _, f := range ent.Fields {
				bs = append(bs, string(f.Field), string(f.Value))
			}
			if err := t.add(1, bs...); err != nil {
				return err
			}
			s.Entries = append(s.Entries, ent)
		}
		if int64(len(page)) < count {
			break
		}
		start = "(" + s.Entries[len(s.Entries)-1].ID
	}
	info, err := rd.C.XInfoStream(ctx, key).Result()
	switch {
	case err == redis.Nil:
		return errGone
	case err != nil && len(s.Entries) == 0:
		return err // an empty stream is its last ID: without it, nothing to write
	case err == nil && (len(s.Entries) == 0 || info.LastGeneratedID != s.Entries[len(s.Entries)-1].ID):
		s.LastID = info.LastGeneratedID
	}
	r.Stream = s
	return nil
}

// entryOf reads one XRANGE entry: [id, [field, value, …]].
func entryOf(v any) (Entry, error) {
	bad := fmt.Errorf("XRANGE: unexpected entry %T", v)
	pair, ok := v.([]any)
	if !ok || len(pair) != 2 {
		return Entry{}, bad
	}
	id, ok := pair[0].(string)
	if !ok {
		return Entry{}, bad
	}
	fv, _ := pair[1].([]any)
	e := Entry{ID: id}
	for i := 0; i+1 < len(fv); i += 2 {
		f, ok1 := fv[i].(string)
		val, ok2 := fv[i+1].(string)
		if !ok1 || !ok2 {
			return Entry{}, bad
		}
		e.Fields = append(e.Fields, Pair{Field: Bytes(f), Value: Bytes(val)})
	}
	return e, nil
}
