package decode

import (
	"strconv"
	"strings"
	"time"

	"github.com/keydeck/keydeck/redisview/schema"
)

// Quota is a counter against a limit per calendar period.
type Quota struct {
	Used     int64
	Limit    int64 // 0: the pack gives none (set per subject elsewhere)
	Unit     string
	Period   string // day or month
	Percent  float64
	ResetsAt time.Time // the next period boundary after now, in the pack's zone
	TTL      time.Duration
	Reached  bool
}

func init() {
	register(schema.RoleQuota, always(ClassBudget), smallReader(func(in *Input, s string, d time.Duration) (any, error) {
		p, ok := in.Match.Family.Params.(*schema.QuotaParams)
		if !ok {
			return nil, nil
		}
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return nil, notDecodable("the value is not an integer count")
		}
		q := Quota{Used: n, Limit: p.Limit, Unit: p.Unit, Period: p.Period, TTL: d, ResetsAt: schema.NextPeriod(p.Period, p.Location(), in.Now)}
		if p.Limit > 0 {
			q.Percent = float64(n) / float64(p.Limit) * 100
			q.Reached = n >= p.Limit
		}
		return &q, nil
	}))
}
