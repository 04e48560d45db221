package limits

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/schema"
)

// readRows reads rows in one pipeline per call: per kind the few O(1)
// commands its state needs (HMGET of two fields, GETRANGE of a bounded
// prefix, ZCOUNT, ZCARD, PTTL). A key that is gone gets PTTL -2.
func readRows(ctx context.Context, c redis.Cmdable, rows []*Row, now time.Time) error {
	if len(rows) == 0 {
		return nil
	}
	pipe := c.Pipeline()
	cs := make([]rowCmds, len(rows))
	for i, r := range rows {
		cs[i].queue(ctx, pipe, r, now)
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		if redisview.IsConnErr(err) || ctx.Err() != nil {
			return err
		}
		// A key of the wrong type answers WRONGTYPE: that row says so below.
	}
	for i, r := range rows {
		cs[i].finish(r, now)
	}
	return nil
}

// rowCmds are one row's queued reads.
type rowCmds struct {
	pttl, lockTTL       *redis.DurationCmd
	hm                  *redis.SliceCmd
	val, lockVal        *redis.StringCmd
	count, card, strlen *redis.IntCmd
}

// queue adds the reads of r's kind to pipe.
func (x *rowCmds) queue(ctx context.Context, pipe redis.Pipeliner, r *Row, now time.Time) {
	if r.Family.Sensitive && KindOf(r.Family).IsLimit() {
		// Never a value of a sensitive family: its TTL only.
		x.pttl = pipe.PTTL(ctx, r.Key)
		return
	}
	switch p := r.Family.Params.(type) {
	case nil:
		if r.Family.Role == schema.RoleBucket4j && !r.Family.Sensitive {
			x.val = pipe.GetRange(ctx, r.Key, 0, stateBytes-1)
			x.strlen = pipe.StrLen(ctx, r.Key)
			break
		}
		if !r.Family.Sensitive { // cooldown
			x.val = pipe.GetRange(ctx, r.Key, 0, holderBytes-1)
			x.strlen = pipe.StrLen(ctx, r.Key)
		}
	case *schema.TokenBucketParams:
		x.hm = pipe.HMGet(ctx, r.Key, p.TokensField, p.TimeField)
	case *schema.CounterWindowParams, *schema.CounterParams:
		x.val = pipe.GetRange(ctx, r.Key, 0, 31)
	case *schema.SlidingWindowParams:
		unit := float64(time.Millisecond)
		if p.ScoreUnit == "s" {
			unit = float64(time.Second)
		}
		lo := "(" + strconv.FormatFloat(float64(now.Add(-p.Window).UnixNano())/unit, 'f', -1, 64)
		hi := strconv.FormatFloat(float64(now.UnixNano())/unit, 'f', -1, 64)
		x.count = pipe.ZCount(ctx, r.Key, lo, hi)
		x.card = pipe.ZCard(ctx, r.Key)
		if p.Lock != nil && p.Lock.Family != nil && p.Lock.Family.InDB(r.DB) {
			if lk, err := p.Lock.Key(schema.Match{Family: r.Family, Vars: r.Vars}.Map()); err == nil {
				r.LockKey = lk
				if !p.Lock.Family.Sensitive {
					x.lockVal = pipe.GetRange(ctx, lk, 0, 31)
				}
				x.lockTTL = pipe.PTTL(ctx, lk)
			}
		}
	default: // lock, cooldown
		if !r.Family.Sensitive {
			x.val = pipe.GetRange(ctx, r.Key, 0, holderBytes-1)
			x.strlen = pipe.StrLen(ctx, r.Key)
		}
	}
	x.pttl = pipe.PTTL(ctx, r.Key)
}

// finish fills r from its replies at now.
func (x *rowCmds) finish(r *Row, now time.Time) {
	r.ReadAt = now
	r.PTTL = x.pttl.Val()
	if x.pttl.Err() == nil && r.PTTL == -2 {
		return
	}
	if r.PTTL < 0 {
		r.PTTL = -1
	}
	if r.Family.Sensitive && KindOf(r.Family).IsLimit() {
		r.Err = "sensitive: the value is not read"
		return
	}
	if r.Family.Role == schema.RoleBucket4j {
		switch {
		case r.Family.Sensitive:
			r.Err = "sensitive: the state is not read"
		case r.fail(x.val):
		case x.strlen.Val() > stateBytes:
			r.Err = "the state is longer than 4 KiB: not read"
		default:
			r.State = []byte(x.val.Val())
			if _, err := decode.DecodeBucket4j(r.State, now); err != nil {
				r.Err = "not a Bucket4j state: " + err.Error()
			}
		}
		return
	}
	x.finishParams(r)
}

// finishParams fills the state of a row whose kind has params (and of a
// lock or cooldown, from its value).
func (x *rowCmds) finishParams(r *Row) {
	switch p := r.Family.Params.(type) {
	case *schema.TokenBucketParams:
		if r.fail(x.hm) {
			return
		}
		v := x.hm.Val()
		if len(v) != 2 {
			r.Err = "not a token bucket"
			return
		}
		var ok bool
		if r.Stored, ok = num(v[0]); !ok {
			r.Err = "field " + p.TokensField + " is missing or not a number"
			return
		}
		r.LastMs, r.HasLast = num(v[1])
		if r.HasLast && p.TimeUnit == "s" {
			r.LastMs *= 1000
		}
	case *schema.CounterWindowParams, *schema.CounterParams:
		if r.fail(x.val) {
			return
		}
		n, err := strconv.ParseInt(strings.TrimSpace(x.val.Val()), 10, 64)
		if err != nil {
			r.Err = "the value is not an integer count"
			return
		}
		r.Count = n
	case *schema.SlidingWindowParams:
		if r.fail(x.count) || r.fail(x.card) {
			return
		}
		r.InWindow, r.Total = x.count.Val(), x.card.Val()
		if x.lockTTL != nil && x.lockTTL.Err() == nil && x.lockTTL.Val() != -2 {
			r.Locked = true
			r.LockPTTL = x.lockTTL.Val()
			if r.LockPTTL < 0 {
				r.LockPTTL = -1
			}
			if x.lockVal != nil && x.lockVal.Err() == nil {
				r.LockValue = x.lockVal.Val()
			}
		}
	default:
		if x.val != nil {
			if r.fail(x.val) {
				return
			}
			r.Holder = x.val.Val()
			r.HolderCut = x.strlen.Val() > holderBytes
		}
	}
}

// fail records cmd's error on r (a nil reply is none) and reports it.
func (r *Row) fail(cmd redis.Cmder) bool {
	if cmd == nil || cmd.Err() == nil || errors.Is(cmd.Err(), redis.Nil) {
		return false
	}
	r.Err = cmd.Err().Error()
	return true
}

func num(v any) (float64, bool) {
	s, ok := v.(string)
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return f, err == nil
}
