package handlers

import (
	"fmt"

	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/quotas"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/views"
	"github.com/keydeck/keydeck/views/format"
)

func init() {
	presenters[schema.RoleQuota] = presentQuota
	quotaPresenters[schema.RoleQuota] = quotaPresenter{order: "most used first", limit: quotaLimit, row: quotaRow}
}

// presentQuota shows a decode.Quota.
func presentQuota(d *panel, state any) {
	q := state.(*decode.Quota)
	unit := ""
	if q.Unit != "" {
		unit = " " + q.Unit
	}
	if q.Limit > 0 {
		d.vm.Summary = fmt.Sprintf("%s / %s%s this %s (%s)", format.Count(q.Used), format.Count(q.Limit), unit, q.Period, format.Percent(q.Percent/100, 1))
	} else {
		d.vm.Summary = fmt.Sprintf("%s%s this %s", format.Count(q.Used), unit, q.Period)
	}
	d.row("Used", format.Count(q.Used)+unit)
	if q.Limit > 0 {
		d.row("Limit", format.Count(q.Limit)+unit)
		d.row("Used share", format.Percent(q.Percent/100, 1))
	} else {
		d.row("Limit", "not in the pack (set per subject elsewhere)")
	}
	d.row("Period", q.Period)
	d.row("Resets at", format.Time(q.ResetsAt))
	d.row("TTL", format.TTL(q.TTL))
	if q.Reached {
		d.vm.Alert = "Quota used up: further use is refused until " + format.Time(q.ResetsAt) + "."
	}
}

// quotaLimit is a quota family's limit per period.
func quotaLimit(f *schema.Family) string {
	p, ok := f.Params.(*schema.QuotaParams)
	if !ok {
		return ""
	}
	if p.Limit > 0 {
		return format.Count(p.Limit) + " " + p.Unit + " per " + p.Period
	}
	return "limit not in Redis: the pack says it is set per subject elsewhere"
}

// quotaRow shows a quota's use on the Quotas page.
func quotaRow(v *views.QuotaRowVM, r quotas.Row) {
	usedRow(v, r)
	if r.Limit <= 0 {
		v.Limit = "not in Redis"
	}
	switch {
	case r.Past:
		v.Resets = "past period " + views.EscapeName(r.Period)
	case !r.ResetsAt.IsZero():
		v.Resets = "resets " + format.Time(r.ResetsAt)
	}
}
