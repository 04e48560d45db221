package handlers

import (
	"strings"

	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/views"
	"github.com/keydeck/keydeck/views/format"
)

func init() {
	presenters[schema.RoleReservation] = presentReservation
}

// presentReservation shows a decode.Reservation.
func presentReservation(d *panel, state any) {
	r := state.(*decode.Reservation)
	amount := views.EscapeName(r.Amount) + unitSuffix(r.Unit)
	d.row("Reserved", amount)
	if r.NoTTL {
		d.vm.Summary = amount + " reserved, no TTL"
		d.row("TTL left", "none")
		d.vm.Alert = "No TTL: a reservation must expire. If its request died before reconciliation, this amount stays held for ever."
	} else {
		d.vm.Summary = amount + " reserved, " + format.Duration(r.TTL) + " left"
		d.row("TTL left", format.TTL(r.TTL))
		d.row("Expires at", format.Time(d.now.Add(r.TTL)))
	}
	if r.MaxTTL > 0 {
		d.row("Age", "about "+format.Duration(r.Age)+" (if written with the pack's "+format.Duration(r.MaxTTL)+" TTL)")
	} else {
		d.row("Age", "not known (no TTL to count from)")
	}
	if line, orphan := reservationSets(r); line != "" {
		d.row("Concurrency sets", line)
		if orphan {
			held := "until it expires"
			if r.NoTTL {
				held = "for ever"
			}
			d.vm.Alert = strings.TrimSpace(d.vm.Alert + " Orphaned: its request id is in no concurrency set and it has outlived a request; its amount stays held " + held + ". An admin can release it.")
		}
	}
}
