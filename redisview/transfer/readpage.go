package transfer

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"
)

// small is one key read whole in a page's pipeline: its size (and, for
// a collection, MEMORY USAGE), then (in a second pipeline) its value
// when it is small.
type small struct {
	r    Record
	size *redis.IntCmd
	mem  *redis.IntCmd
	str  *redis.StringCmd
	scan *redis.ScanCmd
	strs *redis.StringSliceCmd
	zs   *redis.ZSliceCmd
}

// PageBytes bounds the values a page's pipeline reads whole: the rest
// is read a key at a time, so that an export holds at most this much
// plus one key.
const PageBytes = 8 << 20

// readPage reads the values of a page's keys whose heads were read: the
// sizes in one pipeline, the small values (a string up to a chunk, a
// collection up to a page of elements and a chunk of bytes, PageBytes
// in all) in another; a larger key, a stream, or one whose value
// changed between the two is read on its own, in pages (readHead). Each
// line goes to emit as soon as it is read, in the heads' order.
func (rd *Reader) readPage(ctx context.Context, heads []Record, emit func(Record) error) error {
	lim := rd.limits()
	ks := make([]*small, len(heads))
	p := rd.C.Pipeline()
	for i, h := range heads {
		ks[i] = &small{r: h}
		if rd.Withhold != nil && h.Type != "none" {
			if why := rd.Withhold(string(h.Key)); why != "" {
				ks[i].r.Withheld = why
				continue
			}
		}
		ks[i].size = sizeCmd(ctx, p, h)
		if ks[i].size != nil && h.Type != TypeString {
			ks[i].mem = p.MemoryUsage(ctx, string(h.Key))
		}
	}
	if _, err := p.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) && !refusedOnly(ks) {
		return err
	}
	if err := rd.queueWholes(ctx, ks, lim); err != nil {
		return err
	}
	for i, k := range ks {
		r, ok, err := rd.finish(ctx, k, lim)
		ks[i] = nil // its value goes with its line
		if err != nil {
			return err
		}
		if ok {
			if err := emit(r); err != nil {
				return err
			}
		}
	}
	return nil
}

// refusedOnly: the first pipeline's only failures are MEMORY USAGE's
// (refused by an ACL or a managed Redis): sizes are then unknown.
func refusedOnly(ks []*small) bool {
	for _, k := range ks {
		if k.size != nil && k.size.Err() != nil && !errors.Is(k.size.Err(), redis.Nil) {
			return false
		}
	}
	return true
}

// queueWholes reads in one pipeline the keys small enough, within
// PageBytes in all, having taken their work from the budget.
func (rd *Reader) queueWholes(ctx context.Context, ks []*small, lim ReadLimits) error {
	p := rd.C.Pipeline()
	var held, cost int64
	for _, k := range ks {
		if k.size == nil || k.size.Err() != nil || k.size.Val() <= 0 {
			continue
		}
		n, bytes := k.size.Val(), k.size.Val()
		if k.r.Type != TypeString {
			if k.mem.Err() != nil {
				continue // size unknown: read on its own, in small pages
			}
			bytes = k.mem.Val()
		}
		if bytes > lim.Chunk || held+bytes > PageBytes || !k.queueWhole(ctx, p, lim) {
			continue
		}
		held += bytes
		cost += work(min(n, lim.Page), bytes)
	}
	if held == 0 {
		return nil
	}
	if err := rd.take(ctx, cost); err != nil {
		return err
	}
	if _, err := p.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return err
	}
	return nil
}

// sizeCmd queues the size of a key of h's type (nil: a type read on its
// own, or none).
func sizeCmd(ctx context.Context, p redis.Pipeliner, h Record) *redis.IntCmd {
	k := string(h.Key)
	switch h.Type {
	case TypeString:
		return p.StrLen(ctx, k)
	case TypeHash:
		return p.HLen(ctx, k)
	case TypeSet:
		return p.SCard(ctx, k)
	case TypeZSet:
		return p.ZCard(ctx, k)
	case TypeList:
		return p.LLen(ctx, k)
	}
	return nil
}

// queueWhole queues the read of the whole value when its size fits a
// page, and says whether it did.
func (k *small) queueWhole(ctx context.Context, p redis.Pipeliner, lim ReadLimits) bool {
	key, n := string(k.r.Key), k.size.Val()
	switch {
	case k.r.Type == TypeString && n <= lim.Chunk:
		k.str = p.Get(ctx, key)
	case n > lim.Page || n > lim.MaxElements || k.r.Type == TypeString:
		return false
	case k.r.Type == TypeHash:
		k.scan = p.HScan(ctx, key, 0, "", lim.Page)
	case k.r.Type == TypeSet:
		k.scan = p.SScan(ctx, key, 0, "", lim.Page)
	case k.r.Type == TypeZSet:
		k.zs = p.ZRangeWithScores(ctx, key, 0, lim.Page-1)
	case k.r.Type == TypeList:
		k.strs = p.LRange(ctx, key, 0, lim.Page-1)
	default:
		return false
	}
	return true
}

// finish makes the key's record from its whole read, or reads it on its
// own when the pipeline did not read it whole.
func (rd *Reader) finish(ctx context.Context, k *small, lim ReadLimits) (Record, bool, error) {
	r := k.r
	if r.Withheld != "" {
		return r, true, nil
	}
	t := tally{lim: lim}
	var err error
	switch {
	case k.str != nil && k.str.Err() == nil:
		r.String = Bytes(k.str.Val())
		err = t.add(1, k.str.Val())
	case k.scan != nil && k.scan.Err() == nil:
		page, cur := k.scan.Val()
		if cur != 0 {
			return rd.readHead(ctx, k.r) // a rehash, or a hash grown since: page it
		}
		err = rd.addScanned(&r, &t, map[string]bool{}, page)
	case k.strs != nil && k.strs.Err() == nil && int64(len(k.strs.Val())) < lim.Page:
		for _, v := range k.strs.Val() {
			r.Items = append(r.Items, Bytes(v))
		}
		err = t.add(int64(len(r.Items)), k.strs.Val()...)
	case k.zs != nil && k.zs.Err() == nil && int64(len(k.zs.Val())) < lim.Page:
		for _, z := range k.zs.Val() {
			m, _ := z.Member.(string)
			r.Scored = append(r.Scored, Scored{Member: Bytes(m), Score: z.Score})
			err = errors.Join(err, t.add(1, m))
		}
	default:
		if k.mem != nil && k.mem.Err() == nil {
			if err := rd.overMem(k.mem.Val()); err != nil {
				return skipped(r, err), true, nil // over the cap: nothing of it read
			}
		}
		return rd.readHead(ctx, k.r)
	}
	var big errTooBig
	switch {
	case errors.As(err, &big):
		return skipped(r, big), true, nil // never read again past a cap
	case err != nil || !r.hasElements():
		return rd.readHead(ctx, k.r) // gone, or changed: the single read says which
	}
	return r, true, nil
}

func skipped(r Record, err error) Record {
	r.clearValue()
	r.Skipped = err.Error()
	return r
}

// hasElements: a whole read found a value (a key deleted between the
// size and the value reads comes back empty).
func (r *Record) hasElements() bool {
	switch r.Type {
	case TypeHash:
		return len(r.Pairs) > 0
	case TypeList, TypeSet:
		return len(r.Items) > 0
	case TypeZSet:
		return len(r.Scored) > 0
	}
	return true
}
