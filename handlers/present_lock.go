package handlers

import (
	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/views"
	"github.com/keydeck/keydeck/views/format"
)

func init() {
	presenters[schema.RoleLock] = presentLock
}

// presentLock shows a decode.Lock.
func presentLock(d *panel, state any) {
	l := state.(*decode.Lock)
	holder := views.EscapeName(l.Holder)
	if !l.Until.IsZero() {
		d.vm.Summary = "Locked until " + format.Time(l.Until)
		d.row("Unlocks at", format.Time(l.Until))
		if left := l.Until.Sub(d.now); left > 0 {
			d.row("Unlocks in", format.Duration(left))
		} else {
			d.row("Unlocks in", "past (it is still set)")
		}
	} else {
		d.vm.Summary = "Held by " + holder
	}
	d.row("Holder value", holder)
	d.row("TTL left", format.TTL(l.TTL))
	if !l.Expected {
		d.row("Shape", "not the "+l.Kind+" value the pack says")
	}
}
