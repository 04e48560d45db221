package handlers

import (
	"strconv"

	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/quotas"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/views"
	"github.com/keydeck/keydeck/views/format"
)

func init() {
	presenters[schema.RoleBalance] = presentBalance
	quotaPresenters[schema.RoleBalance] = quotaPresenter{order: "lowest first", row: balanceRow}
}

// presentBalance shows a decode.Balance.
func presentBalance(d *panel, state any) {
	b := state.(*decode.Balance)
	unit := ""
	if b.Unit != "" {
		unit = " " + b.Unit
	}
	amount := views.EscapeName(b.Amount)
	d.vm.Summary = amount + unit
	d.row("Amount", amount+unit)
	d.row("Decimal places", strconv.Itoa(b.Scale)+" (as the pack says the application writes)")
	d.row("TTL", format.TTL(b.TTL))
}

// balanceRow shows a balance on the Quotas page.
func balanceRow(v *views.QuotaRowVM, r quotas.Row) {
	v.Amount = views.EscapeName(r.Amount) + unitSuffix(r.Unit)
}
