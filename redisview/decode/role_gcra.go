package decode

import (
	"time"

	"github.com/keydeck/keydeck/redisview/schema"
)

// GCRA is a GCRA limiter: its theoretical arrival time (TAT).
type GCRA struct{ TAT time.Time }

func init() {
	register(schema.RoleGCRA, paramsClass[*schema.GCRAParams](ClassLimit), smallReader(func(in *Input, s string, d time.Duration) (any, error) {
		return &GCRA{}, nil
	}))
	registerRow(schema.RoleGCRA, readCountRow(func(n int64) RowState { return GCRARow{TATMs: n} }), nil)
}

// GCRARow is a GCRA limiter as the sweep read it.
type GCRARow struct{ TATMs int64 }

// At: the burst used is how far the TAT is ahead of now, in emission intervals.
func (g GCRARow) At(s Since) Moment {
	m := Moment{Gone: s.Gone()}
	p := s.Family.Params.(*schema.GCRAParams)
	interval := p.Period / time.Duration(p.Limit)
	ahead := max(0, time.UnixMilli(g.TATMs).Sub(s.Now))
	m.Limit, m.Used = float64(p.Limit), float64(ahead/interval)
	m.Throttled = m.Used >= m.Limit
	m.ResetsIn = ahead
	return m
}
