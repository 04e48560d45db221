package transfer

import (
	"context"
	"errors"
	"strings"

	"github.com/redis/go-redis/v9"
)

// batch is how many elements one queued write carries at most, so that
// no single command of an import is huge.
const batch = 1000

// ErrNoValue: a line without a value (withheld or skipped) writes nothing.
var ErrNoValue = errors.New("the line has no value to write")

// Queue queues the writes that make key r.Key hold exactly r: DEL, the
// value in commands of at most 1,000 elements, PEXPIRE when it has a TTL.
// It only queues (no reply is read), so that it fits in a MULTI: p is
// a TxPipeline, or a Pipeliner the caller wraps in MULTI/EXEC.
func Queue(ctx context.Context, p redis.Pipeliner, r Record) error {
	if !r.HasValue() {
		return ErrNoValue
	}
	key := string(r.Key)
	p.Del(ctx, key)
	switch r.Type {
	case TypeString:
		p.Set(ctx, key, string(r.String), 0)
	case TypeHash:
		chunks(len(r.Pairs), 2, func(i int, args []any) []any {
			return append(args, string(r.Pairs[i].Field), string(r.Pairs[i].Value))
		}, func(args []any) { p.HSet(ctx, key, args...) })
	case TypeList:
		chunks(len(r.Items), 1, func(i int, args []any) []any { return append(args, string(r.Items[i])) },
			func(args []any) { p.RPush(ctx, key, args...) })
	case TypeSet:
		chunks(len(r.Items), 1, func(i int, args []any) []any { return append(args, string(r.Items[i])) },
			func(args []any) { p.SAdd(ctx, key, args...) })
	case TypeZSet:
		for i := 0; i < len(r.Scored); i += batch {
			zs := make([]redis.Z, 0, batch)
			for _, s := range r.Scored[i:min(i+batch, len(r.Scored))] {
				zs = append(zs, redis.Z{Score: s.Score, Member: string(s.Member)})
			}
			p.ZAdd(ctx, key, zs...)
		}
	case TypeStream:
		queueStream(ctx, p, key, r.Stream)
	default:
		return errors.New("type " + r.Type + " cannot be written")
	}
	if r.TTL > 0 {
		p.Do(ctx, "pexpire", key, r.TTL) // ms as sent: a Duration overflows past 292 years
	}
	return nil
}

// chunks calls flush with the arguments of up to batch elements at a time.
func chunks(n, per int, add func(i int, args []any) []any, flush func([]any)) {
	for i := 0; i < n; i += batch {
		args := make([]any, 0, per*min(batch, n-i))
		for j := i; j < min(i+batch, n); j++ {
			args = add(j, args)
		}
		flush(args)
	}
}

// queueStream adds the entries with their IDs, then sets the last ID the
// stream generated. A stream of no entries is made by adding one entry
// at its last ID and trimming it away (MAXLEN 0), which leaves the
// stream empty with that last ID; XADD refuses 0-0, so an empty stream
// that never had an entry (XGROUP CREATE … MKSTREAM) is made the same
// way: a group creates it, and goes.
func queueStream(ctx context.Context, p redis.Pipeliner, key string, s *Stream) {
	if s == nil {
		return
	}
	if len(s.Entries) == 0 {
		if id, _ := parseID(s.LastID); id == (streamPos{}) {
			p.Do(ctx, "xgroup", "create", key, importGroup, "$", "mkstream")
			p.Do(ctx, "xgroup", "destroy", key, importGroup)
			return
		}
		p.Do(ctx, "xadd", key, "maxlen", "0", s.LastID, "", "")
		return
	}
	for _, e := range s.Entries {
		args := []any{"xadd", key, e.ID}
		for _, f := range e.Fields {
			args = append(args, string(f.Field), string(f.Value))
		}
		p.Do(ctx, args...)
	}
	if last := s.Entries[len(s.Entries)-1].ID; s.LastID != "" && s.LastID != last && idLess(last, s.LastID) {
		p.Do(ctx, "xsetid", key, s.LastID)
	}
}

// importGroup is the consumer group that makes an empty stream: gone
// before EXEC returns.
const importGroup = "keydeck-import"

// idLess compares two stream IDs MS-SEQ.
func idLess(a, b string) bool {
	am, as, _ := strings.Cut(a, "-")
	bm, bs, _ := strings.Cut(b, "-")
	if len(am) != len(bm) {
		return len(am) < len(bm)
	}
	if am != bm {
		return am < bm
	}
	if len(as) != len(bs) {
		return len(as) < len(bs)
	}
	return as < bs
}

// Write writes one key in one MULTI/EXEC (Queue's commands).
func Write(ctx context.Context, c redis.UniversalClient, r Record) error {
	_, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error { return Queue(ctx, p, r) })
	return err
}
