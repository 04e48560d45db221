package decode

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview/schema"
)

// CounterWindow is an INCR + EXPIRE fixed window: the count against the
// pack's limit; the window ends when the key expires.
type CounterWindow struct {
	Count    int64
	Limit    int64
	Window   time.Duration // 0 for a calendar window
	Calendar string        // "", day or month
	Zone     string
	ResetsIn time.Duration // the TTL; negative when the key has none
	Reached  bool
}

func init() {
	register(schema.RoleCounterWindow, paramsClass[*schema.CounterWindowParams](ClassLimit), smallReader(func(in *Input, s string, d time.Duration) (any, error) {
		p, ok := in.Match.Family.Params.(*schema.CounterWindowParams)
		if !ok {
			return nil, nil
		}
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return nil, notDecodable("the value is not an integer count")
		}
		cw := CounterWindow{Count: n, Limit: p.Limit, Window: p.Window, Calendar: p.Calendar, Zone: p.Location().String(), ResetsIn: d, Reached: n >= p.Limit}
		if p.Calendar != "" {
			cw.Window = 0
		}
		return &cw, nil
	}))
	registerRow(schema.RoleCounterWindow, readCountRow(func(n int64) RowState { return WindowRow{Count: n} }), nil)
	registerReset(schema.RoleCounterWindow, Reset{Level: func(f *schema.Family, r ResetRead) (LimitLevel, Verdict) {
		var l LimitLevel
		if p, ok := f.Params.(*schema.CounterWindowParams); ok {
			l.Limit, l.Window = p.Limit, p.Window
			if p.Calendar != "" {
				l.Calendar, l.Zone = p.Calendar, p.Location().String()
			}
		}
		l.Count, l.Counted = r.Count()
		return l, verdictOf(l)
	}})
}

// WindowRow is a fixed window as the limits sweep read it: its count; the
// window ends with the key's TTL.
type WindowRow struct{ Count int64 }

// At is the window at s.Now: throttled at its limit, nothing used once
// the key expired.
func (w WindowRow) At(s Since) Moment {
	p, ok := s.Family.Params.(*schema.CounterWindowParams)
	if !ok {
		return Moment{Gone: s.Gone()}
	}
	return countAt(s, w.Count, p.Limit, w.Count >= p.Limit)
}

// smallReader is the reader of a role whose state is a short string and
// its TTL (queueSmall): build makes the state from them.
func smallReader(build func(in *Input, value string, ttl time.Duration) (any, error)) step {
	return func(ctx context.Context, p redis.Pipeliner, in *Input) finish {
		sm := queueSmall(ctx, p, in.Key)
		return func() (any, step, error) {
			s, d, err := sm.get()
			if err != nil {
				return done(nil, err)
			}
			return done(build(in, s, d))
		}
	}
}
