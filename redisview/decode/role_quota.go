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

func init() {
	registerBudget(schema.RoleQuota, budgetRole{order: 0, fill: fillQuota, rank: rankUsed})
}

// fillQuota reads a quota's count against the pack's limit, and the
// period its key names.
func fillQuota(b *Budget, r BudgetRead) string {
	p, ok := r.Match.Family.Params.(*schema.QuotaParams)
	if !ok {
		return ""
	}
	u, err := strconv.ParseInt(r.Value, 10, 64)
	if err != nil {
		return "the value is not an integer count"
	}
	b.Used, b.Limit, b.Unit = u, p.Limit, p.Unit
	if p.Limit > 0 {
		b.Percent = float64(u) / float64(p.Limit) * 100
	}
	b.ResetsAt = schema.NextPeriod(p.Period, p.Location(), r.Now)
	b.Period, b.Past = keyPeriod(r.Match, p, r.Now)
	return ""
}

// keyPeriod finds the period a quota key names: the value of its digits
// placeholder of 6 (month: yyyyMM) or 8 (day: yyyyMMdd) characters, and
// whether it is before now's period in the pack's zone.
func keyPeriod(m schema.Match, p *schema.QuotaParams, now time.Time) (string, bool) {
	layout, n := "200601", 6
	if p.Period == "day" {
		layout, n = "20060102", 8
	}
	for _, ph := range m.Family.Pattern.Placeholders() {
		if ph.Class != schema.ClassDigits || ph.Len != n {
			continue
		}
		for _, v := range m.Vars {
			if v.Name == ph.Name {
				cur := now.In(p.Location()).Format(layout)
				return v.Value, v.Value < cur
			}
		}
	}
	return "", false
}
