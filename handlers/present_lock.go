package handlers

import (
	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/limits"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/views"
	"github.com/keydeck/keydeck/views/format"
	"time"
)

func init() {
	presenters[schema.RoleLock] = presentLock
	lockPresenters[schema.RoleLock] = lockPresenter{
		rank: 1,
		value: func(f *schema.Family) string {
			lp, _ := f.Params.(*schema.LockParams)
			switch {
			case lp == nil:
				return "lock"
			case lp.Value == "uuid":
				return "lock; the value is the holder's id (UUID)"
			case lp.Value == "epoch-ms":
				return "lock; the value is the unlock time (epoch ms)"
			}
			return "lock; the value (\"" + lp.Value + "\") does not name its holder"
		},
		holder: func(st limits.State) string {
			if st.HolderCut {
				return st.Holder + "…"
			}
			return st.Holder
		},
		hold: func(f *schema.Family) time.Duration {
			if lp, ok := f.Params.(*schema.LockParams); ok {
				return lp.Hold
			}
			return 0
		},
	}
}

// presentLock shows a decode.Lock.
func presentLock(d *panel, state any) {
	l := state.(*decode.Lock)
	holder := views.EscapeName(l.Holder)
	if !l.Until.IsZero() {
		d.vm.Summary, d.vm.SummaryUntil = "Locked until", format.Time(l.Until)
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
