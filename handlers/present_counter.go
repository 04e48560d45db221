package handlers

import (
	"fmt"
	"github.com/keydeck/keydeck/redisview/limits"

	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/views/format"
)

func init() {
	presenters[schema.RoleCounter] = presentCounter
	// A counter is a rate limit only when the pack gives its limit
	// (decode's class), so its params are there on the Rate limits page.
	limitPresenters[schema.RoleCounter] = limitPresenter{
		rank: 5,
		limit: func(f *schema.Family) string {
			p, ok := f.Params.(*schema.CounterParams)
			if !ok {
				return ""
			}
			s := fmt.Sprintf("limit %d (a counter whose lifetime the application sets)", p.Limit)
			if p.OnExceed != "" {
				s += "; past it: " + p.OnExceed
			}
			return s
		},
		level: func(f *schema.Family, st limits.State) string {
			p, ok := f.Params.(*schema.CounterParams)
			if !ok {
				return ""
			}
			return usedLeft(st.Count, p.Limit, "")
		},
	}
}

// presentCounter shows a decode.Counter.
func presentCounter(d *panel, state any) {
	n := state.(*decode.Counter)
	if n.Limit > 0 {
		d.vm.Summary = fmt.Sprintf("%s of %s", format.Count(n.Value), format.Count(n.Limit))
		d.row("Count", format.Count(n.Value))
		d.row("Limit", format.Count(n.Limit))
		d.row("At the limit", n.OnExceed)
		if n.Reached {
			d.vm.Alert = "Limit reached (" + n.OnExceed + ")."
		}
	} else {
		d.vm.Summary = format.Count(n.Value)
		d.row("Count", format.Count(n.Value))
	}
	d.row("TTL left", format.TTL(n.TTL))
	if n.TTL >= 0 {
		d.vm.Summary += ", resets in " + format.Duration(n.TTL)
	}
}
