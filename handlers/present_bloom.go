package handlers

import (
	"fmt"
	"strconv"

	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/views"
	"github.com/keydeck/keydeck/views/format"
)

func init() {
	presenters[schema.RoleBloom] = presentBloom
}

// presentBloom shows a decode.Bloom.
func presentBloom(d *panel, state any) {
	b := state.(*decode.Bloom)
	d.row("Bits in the string", format.Count(b.Bits)+" ("+format.Plural(b.Bytes, "byte", "bytes")+")")
	d.row("Bits in the pack", format.Count(b.Configured))
	d.row("Hash functions", strconv.Itoa(b.Hashes))
	if b.Counted {
		d.vm.Summary = fmt.Sprintf("%s bits set (%s full), false positives ≈ %s", format.Count(b.SetBits), format.Percent(b.Fill, 2), fpRate(b.FalsePositive))
		d.row("Set bits", format.Count(b.SetBits))
		d.row("Fill", format.Percent(b.Fill, 2))
		d.row("False positives", fpRate(b.FalsePositive)+" (fill ^ "+strconv.Itoa(b.Hashes)+")")
	} else {
		d.vm.Summary = format.Bytes(b.Bytes) + ", too long to count"
		d.row("Set bits", "not counted: longer than "+format.Bytes(decode.MaxBloomBytes))
	}
	if b.Bits < b.Configured && b.Bits > 0 {
		d.row("Past the string's end", "unset (SETBIT grows it only to the highest bit set)")
	}
	if b.HasMembers {
		v := format.Count(b.Members)
		if route.Linkable(b.MembersKey) {
			d.link("Exact members", v+" in "+views.EscapeName(b.MembersKey), route.KeyURL(d.conn, d.db, b.MembersKey))
		} else {
			d.row("Exact members", v)
		}
		d.vm.Summary += ", " + format.Plural(b.Members, "member", "members")
	}
	if b.Counted && b.Fill > 0.5 {
		d.vm.Alert = "Over half the bits are set: false positives are frequent; the filter needs rebuilding larger."
	}
}
