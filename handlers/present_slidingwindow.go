package handlers

import (
	"fmt"
	"github.com/keydeck/keydeck/redisview/limits"

	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/views"
	"github.com/keydeck/keydeck/views/format"
)

func init() {
	presenters[schema.RoleSlidingWindow] = presentSlidingWindow
	limitPresenters[schema.RoleSlidingWindow] = limitPresenter{
		rank: 3,
		limit: func(f *schema.Family) string {
			p, ok := f.Params.(*schema.SlidingWindowParams)
			if !ok {
				return ""
			}
			s := fmt.Sprintf("limit %d per %s (sliding)", p.Limit, format.Duration(p.Window))
			if p.Lock != nil {
				s += fmt.Sprintf("; exceeding it locks for %s", format.Duration(p.LockFor))
			}
			return s
		},
		level: func(f *schema.Family, st limits.State) string {
			p, ok := f.Params.(*schema.SlidingWindowParams)
			if !ok {
				return ""
			}
			return usedLeft(st.Count, p.Limit, " in the last "+format.Duration(p.Window))
		},
	}
}

// presentSlidingWindow shows a decode.SlidingWindow.
func presentSlidingWindow(d *panel, state any) {
	sw := state.(*decode.SlidingWindow)
	d.vm.Summary = fmt.Sprintf("%s of %s in the last %s", format.Count(sw.InWindow), format.Count(sw.Limit), format.Duration(sw.Window))
	d.row("In the window", format.Count(sw.InWindow))
	d.row("Limit", format.Count(sw.Limit))
	d.row("Window", format.Duration(sw.Window))
	if sw.InWindow > 0 {
		d.row("Oldest", format.Time(sw.Oldest))
		d.row("Newest", format.Time(sw.Newest))
	}
	d.row("Older entries", format.Count(sw.Total-sw.InWindow))
	if sw.LockKey != "" {
		if sw.Locked {
			d.row("Lock", "locked")
			d.vm.Alert = "Locked: the lock " + views.EscapeName(sw.LockKey) + " is set."
		} else {
			d.row("Lock", "not locked")
		}
	}
	if sw.Reached && d.vm.Alert == "" {
		d.vm.Alert = "Limit reached inside the window."
	}
}
