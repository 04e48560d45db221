package handlers

import (
	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/quotas"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/views"
	"github.com/keydeck/keydeck/views/format"
)

func init() {
	presenters[schema.RoleBreakerHint] = presentBreakerHint
	quotaPresenters[schema.RoleBreakerHint] = quotaPresenter{order: "open first", row: breakerHintRow}
}

// presentBreakerHint shows a decode.BreakerHint.
func presentBreakerHint(d *panel, state any) {
	h := state.(*decode.BreakerHint)
	st := views.EscapeName(h.State)
	if h.Open {
		d.vm.Summary = "open, " + format.TTL(h.TTL) + " left"
		d.row("State", "open: a replica opened its breaker; others may open theirs sooner (never a reason to close one)")
	} else {
		d.vm.Summary = st + ", " + format.TTL(h.TTL) + " left"
		d.row("State", st+" (not the \"open\" marker the gateway writes)")
	}
	d.row("TTL left", format.TTL(h.TTL))
	if h.TTL < 0 {
		d.vm.Alert = "No TTL: an advisory hint must expire, or every replica keeps opening its breaker on it."
	}
}

// breakerHintRow shows a breaker hint on the Quotas page.
func breakerHintRow(v *views.QuotaRowVM, r quotas.Row) {
	v.Amount = views.EscapeName(r.State)
	if r.Open {
		v.Level = "warn"
	}
}
