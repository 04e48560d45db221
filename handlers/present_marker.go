package handlers

import (
	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/views"
	"github.com/keydeck/keydeck/views/format"
)

func init() {
	presenters[schema.RoleIdempotency] = presentMarker
	presenters[schema.RoleNonce] = presentMarker
}

// presentMarker shows a decode.Marker.
func presentMarker(d *panel, state any) {
	mk := state.(*decode.Marker)
	what := "Done"
	if d.role == schema.RoleNonce {
		what = "Used"
	}
	value, _ := views.ShortName(mk.Value)
	d.row("Value", value)
	if !mk.At.IsZero() {
		d.row("Value as a time", format.Time(mk.At))
	}
	if mk.TTL < 0 {
		d.vm.Summary = what + ", kept for ever"
		d.row("TTL left", "none")
	} else {
		d.vm.Summary = what + ", forgotten in " + format.Duration(mk.TTL)
		d.row("TTL left", format.TTL(mk.TTL))
		d.row("Forgotten at", format.Time(d.now.Add(mk.TTL)))
	}
	if d.role == schema.RoleNonce {
		d.row("Meaning", "a repeat of it is refused as a replay until it expires")
	} else {
		d.row("Meaning", "a repeat of the operation is skipped until it expires")
	}
}
