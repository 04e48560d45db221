package transfer

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"
)

// small is one key read whole in a page's pipeline: its size, then (in
// a second pipeline) its value when the size fits one page.
type small struct {
	r    Record
	size *redis.IntCmd
	str  *redis.StringCmd
	scan *redis.ScanCmd
	strs *redis.StringSliceCmd
	zs   *redis.ZSliceCmd
}

// readPage reads the values of a page's keys whose heads were read: the
// sizes in one pipeline, the values that fit one page (a string up to a
// chunk, a collection up to Page elements) in another; a larger key,
// a stream, or one whose value changed between the two is read on its
// own, in pages (readHead). The lines come back in the heads' order.
func (rd *Reader) readPage(ctx context.Context, heads []Record) ([]Record, error) {
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
	}
	if _, err := p.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, err
	}
	p = rd.C.Pipeline()
	for _, k := range ks {
		if k.size != nil && k.size.Err() == nil && k.size.Val() > 0 {
			k.queueWhole(ctx, p, lim)
		}
	}
	if _, err := p.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, err
	}
	out := make([]Record, 0, len(ks))
	for _, k := range ks {
		r, ok, err := rd.finish(ctx, k, lim)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, r)
		}
	}
	return out, nil
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
// page.
func (k *small) queueWhole(ctx context.Context, p redis.Pipeliner, lim ReadLimits) {
	key, n := string(k.r.Key), k.size.Val()
	switch {
	case k.r.Type == TypeString && n <= lim.Chunk:
		k.str = p.Get(ctx, key)
	case n > lim.Page || n > lim.MaxElements:
	case k.r.Type == TypeHash:
		k.scan = p.HScan(ctx, key, 0, "", lim.Page)
	case k.r.Type == TypeSet:
		k.scan = p.SScan(ctx, key, 0, "", lim.Page)
	case k.r.Type == TypeZSet:
		k.zs = p.ZRangeWithScores(ctx, key, 0, lim.Page-1)
	case k.r.Type == TypeList:
		k.strs = p.LRange(ctx, key, 0, lim.Page-1)
	}
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
		return rd.readHead(ctx, k.r)
	}
	if err != nil || !r.hasElements() {
		return rd.readHead(ctx, k.r) // over a cap, or gone: the single read says which
	}
	return r, true, nil
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
