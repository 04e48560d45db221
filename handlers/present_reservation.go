package handlers

import (
	"strconv"
	"strings"

	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/quotas"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/views"
	"github.com/keydeck/keydeck/views/format"
)

func init() {
	presenters[schema.RoleReservation] = presentReservation
	quotaPresenters[schema.RoleReservation] = quotaPresenter{order: "no TTL first, then orphaned, then oldest", limit: reservationLimit, row: reservationRow}
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

// reservationLimit: a reservation must expire.
func reservationLimit(f *schema.Family) string {
	if _, ok := f.Params.(*schema.ReservationParams); !ok {
		return ""
	}
	if f.TTL.Max > 0 {
		return "must expire; written with a TTL of " + format.Duration(f.TTL.Max)
	}
	return "must expire"
}

// reservationRow shows a reservation on the Quotas page: its amount, age,
// and whether it is orphaned.
func reservationRow(v *views.QuotaRowVM, r quotas.Row) {
	v.Amount = views.EscapeName(r.Amount) + unitSuffix(r.Unit)
	if r.NoTTL {
		v.Flags = append(v.Flags, "no TTL: never expires")
		v.Level = "full"
	}
	if r.Age > 0 {
		v.Age = format.Duration(r.Age)
	}
	v.Orphan = orphanText(r)
	if r.Orphaned {
		v.Flags = append(v.Flags, v.Orphan)
		v.Orphan = ""
		if v.Level == "" {
			v.Level = "warn"
		}
	}
}

// orphanText says whether a reservation's request id is in a concurrency
// set the walk knows, and whether that makes it orphaned.
func orphanText(r quotas.Row) string {
	age := "no TTL"
	if !r.NoTTL {
		age = format.Duration(r.Age) + " old"
	}
	switch {
	case !r.SetsKnown:
		return ""
	case r.SetsSensitive:
		return "orphaned or not: hidden: sensitive (the concurrency sets are marked sensitive: their members are never read)"
	case r.InSet != "":
		return "in flight: in " + views.EscapeName(r.InSet)
	case r.Orphaned:
		return "orphaned: in no concurrency set, " + age
	case !r.SetsComplete:
		return "in none of the " + strconv.Itoa(r.SetsChecked) + " concurrency sets known to the walk; orphaned or not is not known until a walk completes with every set"
	case !r.Overdue:
		return "in no concurrency set yet, " + age + " (younger than " + format.Duration(decode.ReservationLifetime) + ")"
	}
	return ""
}
