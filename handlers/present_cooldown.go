package handlers

import (
	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/limits"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/views/format"
)

func init() {
	presenters[schema.RoleCooldown] = presentCooldown
	lockPresenters[schema.RoleCooldown] = lockPresenter{
		rank:   2,
		value:  func(*schema.Family) string { return "cooldown: blocks the action while it exists" },
		holder: func(st limits.State) string { return st.Holder },
	}
}

// presentCooldown shows a decode.Cooldown.
func presentCooldown(d *panel, state any) {
	cd := state.(*decode.Cooldown)
	if cd.TTL < 0 {
		d.vm.Summary = "Cooling down, no TTL"
		d.row("TTL left", "none")
		d.vm.Alert = "No TTL: the cooldown never ends, so the action stays blocked."
	} else {
		d.vm.Summary = "Cooling down, " + format.Duration(cd.TTL) + " left"
		d.row("TTL left", format.TTL(cd.TTL))
		d.row("Ends at", format.Time(cd.Ends))
	}
}
