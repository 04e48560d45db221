package handlers

import (
	"fmt"
	"github.com/keydeck/keydeck/redisview/limits"

	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/views/format"
)

func init() {
	presenters[schema.RoleCounterWindow] = presentCounterWindow
	limitPresenters[schema.RoleCounterWindow] = limitPresenter{
		rank: 2,
		limit: func(f *schema.Family) string {
			p, ok := f.Params.(*schema.CounterWindowParams)
			if !ok {
				return ""
			}
			if p.Calendar != "" {
				return fmt.Sprintf("limit %d per calendar %s (%s)", p.Limit, p.Calendar, p.Location())
			}
			return fmt.Sprintf("limit %d per %s (fixed window)", p.Limit, format.Duration(p.Window))
		},
		level: func(f *schema.Family, st limits.State) string {
			p, ok := f.Params.(*schema.CounterWindowParams)
			if !ok {
				return ""
			}
			return usedLeft(st.Count, p.Limit, "")
		},
	}
}

// presentCounterWindow shows a decode.CounterWindow.
func presentCounterWindow(d *panel, state any) {
	cw := state.(*decode.CounterWindow)
	per := format.Duration(cw.Window)
	if cw.Calendar != "" {
		per = cw.Calendar + " (" + cw.Zone + ")"
	}
	d.vm.Summary = fmt.Sprintf("%s of %s in this window", format.Count(cw.Count), format.Count(cw.Limit))
	d.row("Count", format.Count(cw.Count))
	d.row("Limit", format.Count(cw.Limit))
	d.row("Window", per)
	if cw.ResetsIn >= 0 {
		d.row("Resets in", format.Duration(cw.ResetsIn))
	} else {
		d.row("Resets in", "never: no TTL")
	}
	if cw.Reached {
		d.vm.Alert = "Limit reached: further requests are refused until the window resets."
	}
}
