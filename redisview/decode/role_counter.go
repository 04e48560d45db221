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
}

// counterClass: a counter is a rate limit only when the pack gives its limit.
func counterClass(f *schema.Family) Class {
	if p, ok := f.Params.(*schema.CounterParams); ok && p.Limit > 0 {
		return ClassLimit
	}
	return ClassNone
}
