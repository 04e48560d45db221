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
		q := Quota{Used: n, Limit: p.Limit, Unit: p.Unit, Period: p.Period, TTL: d, ResetsAt: NextPeriod(p.Period, p.Location(), in.Now)}
		if p.Limit > 0 {
			q.Percent = float64(n) / float64(p.Limit) * 100
			q.Reached = n >= p.Limit
		}
		return &q, nil
	}))
}

// NextPeriod is the start of the day or month after now's, in loc, as UTC.
func NextPeriod(period string, loc *time.Location, now time.Time) time.Time {
	t := now.In(loc)
	switch period {
	case "day":
		return time.Date(t.Year(), t.Month(), t.Day()+1, 0, 0, 0, 0, loc).UTC()
	case "month":
		return time.Date(t.Year(), t.Month()+1, 1, 0, 0, 0, 0, loc).UTC()
	}
	return time.Time{}
}
