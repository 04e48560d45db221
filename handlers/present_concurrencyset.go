package handlers

import (
	"fmt"
	"strconv"

	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/quotas"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/views"
	"github.com/keydeck/keydeck/views/format"
)

func init() {
	presenters[schema.RoleConcurrencySet] = presentConcurrencySet
	quotaPresenters[schema.RoleConcurrencySet] = quotaPresenter{order: "most used first", limit: concurrencySetLimit, row: concurrencySetRow}
}

// presentConcurrencySet shows a decode.ConcurrencySet.
func presentConcurrencySet(d *panel, state any) {
	cs := state.(*decode.ConcurrencySet)
	if cs.Limit > 0 {
		d.vm.Summary = fmt.Sprintf("%s of %s in flight", format.Count(cs.InFlight), format.Count(cs.Limit))
		d.row("Cap", format.Count(cs.Limit))
		if cs.InFlight >= cs.Limit {
			d.vm.Alert = "At the cap: a new request is refused until one completes."
		}
	} else {
		d.vm.Summary = format.Count(cs.InFlight) + " in flight"
		d.row("Cap", "none in the pack (a deployment setting)")
	}
	d.row("In flight", format.Count(cs.InFlight))
	d.row("TTL left", format.TTL(cs.TTL))
	if cs.TTL < 0 && cs.InFlight > 0 {
		d.row("Expiry", "none: members of crashed requests are never dropped")
	}
	missing := 0
	for _, mb := range cs.Members {
		name, cut := views.ShortName(mb.ID)
		dm := views.DecodedMember{Name: name, Cut: cut}
		switch {
		case cs.ReservationFamily == "":
		case mb.TooLong:
			dm.Flag = "not checked: id longer than 4 KiB"
		case mb.Reservation == "":
			dm.Flag = "no reservation key can be built from this id"
		case mb.Reserved:
			if route.Linkable(mb.Reservation) {
				dm.Href = route.KeyURL(d.conn, d.db, mb.Reservation)
			}
		default:
			dm.Flag = "no reservation"
			missing++
		}
		d.vm.Members = append(d.vm.Members, dm)
	}
	if n := len(cs.Members); n > 0 {
		d.vm.MembersTitle = "In-flight request ids"
		if cs.More {
			d.vm.MembersTitle += fmt.Sprintf(" (%s of %s, one SSCAN page)", format.Count(int64(n)), format.Count(cs.InFlight))
		}
		if cs.ReservationFamily != "" {
			d.vm.MembersTitle += ", linked to their reservation (family " + cs.ReservationFamily + ")"
			d.row("Without a reservation", fmt.Sprintf("%s of the %s read", format.Count(int64(missing)), format.Count(int64(n))))
			if missing > 0 && d.vm.Alert == "" {
				d.vm.Alert = format.Plural(int64(missing), "in-flight request has", "in-flight requests have") + " no reservation."
			}
		}
	}
}

// concurrencySetLimit is a concurrency family's cap.
func concurrencySetLimit(f *schema.Family) string {
	p, ok := f.Params.(*schema.ConcurrencySetParams)
	if !ok {
		return ""
	}
	if p.Limit > 0 {
		return "cap " + format.Count(p.Limit) + " in flight"
	}
	return "cap not in Redis (a deployment setting)"
}

// concurrencySetRow shows a set's size against its cap on the Quotas page,
// and its members without a reservation.
func concurrencySetRow(v *views.QuotaRowVM, r quotas.Row) {
	usedRow(v, r)
	if r.Checked == 0 {
		return
	}
	v.Orphans = append(v.Orphans, r.Orphans...)
	if len(r.Orphans) > 0 {
		v.Flags = append(v.Flags, format.Plural(int64(len(r.Orphans)), "member", "members")+" without a reservation")
	}
	if r.MoreMems {
		v.Flags = append(v.Flags, "first "+strconv.Itoa(r.Checked)+" members checked")
	}
}
