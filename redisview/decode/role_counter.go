package decode

import (
	"strconv"
	"strings"
	"time"

	"github.com/keydeck/keydeck/redisview/schema"
)

// Counter is an INCR counter, against the pack's limit if it gives one.
type Counter struct {
	Value    int64
	Limit    int64 // 0: none
	OnExceed string
	TTL      time.Duration
	Reached  bool
}

func init() {
	register(schema.RoleCounter, counterClass, smallReader(func(in *Input, s string, d time.Duration) (any, error) {
		p, ok := in.Match.Family.Params.(*schema.CounterParams)
		if !ok {
			return nil, nil
		}
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return nil, notDecodable("the value is not an integer count")
		}
		onExceed := p.OnExceed
		if onExceed == "" {
			onExceed = "reject"
		}
		return &Counter{Value: n, Limit: p.Limit, OnExceed: onExceed, TTL: d, Reached: p.Limit > 0 && n >= p.Limit}, nil
	}))
	registerRow(schema.RoleCounter, readCountRow(func(n int64) RowState { return CounterRow{Count: n} }), nil)
	registerReset(schema.RoleCounter, Reset{Level: func(f *schema.Family, r ResetRead) (LimitLevel, Verdict) {
		var l LimitLevel
		if p, ok := f.Params.(*schema.CounterParams); ok {
			l.Limit = p.Limit
		}
		l.Count, l.Counted = r.Count()
		return l, verdictOf(l)
	}})
}

// CounterRow is a counter with a limit as the limits sweep read it.
type CounterRow struct{ Count int64 }

// At is the counter at s.Now: throttled at its limit.
func (c CounterRow) At(s Since) Moment {
	p, ok := s.Family.Params.(*schema.CounterParams)
	if !ok {
		return Moment{Gone: s.Gone()}
	}
	return countAt(s, c.Count, p.Limit, p.Limit > 0 && c.Count >= p.Limit)
}

// counterClass: a counter is a rate limit only when the pack gives its limit.
func counterClass(f *schema.Family) Class {
	if p, ok := f.Params.(*schema.CounterParams); ok && p.Limit > 0 {
		return ClassLimit
	}
	return ClassNone
}
