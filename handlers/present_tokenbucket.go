package handlers

import (
	"fmt"
	"github.com/keydeck/keydeck/redisview/limits"
	"strconv"
	"time"

	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/views/format"
)

func init() {
	presenters[schema.RoleTokenBucket] = presentTokenBucket
	limitPresenters[schema.RoleTokenBucket] = limitPresenter{
		rank: 1,
		limit: func(f *schema.Family) string {
			p, ok := f.Params.(*schema.TokenBucketParams)
			if !ok {
				return ""
			}
			return fmt.Sprintf("capacity %s, refills %s/s (full in %s)", num(p.Capacity), num(p.RefillPerSec), format.Duration(p.Window))
		},
		level: func(f *schema.Family, st limits.State) string {
			p, ok := f.Params.(*schema.TokenBucketParams)
			if !ok {
				return ""
			}
			return fmt.Sprintf("%s of %s tokens left", num(float64(int64(st.Tokens))), num(p.Capacity))
		},
	}
}

// presentTokenBucket shows a decode.TokenBucket.
func presentTokenBucket(d *panel, state any) {
	tb := state.(*decode.TokenBucket)
	d.vm.Summary = fmt.Sprintf("%s of %s tokens now", tokens(tb.Tokens), tokens(tb.Capacity))
	d.row("Tokens now", tokens(tb.Tokens))
	d.row("Read at", format.Clock(tb.Now))
	d.row("Capacity", tokens(tb.Capacity))
	refill := strconv.FormatFloat(tb.RefillPerS, 'g', 4, 64) + " tokens a second"
	if tb.RefillPerS > 0 {
		refill += " (empty to full in " + format.Duration(time.Duration(tb.Capacity/tb.RefillPerS*float64(time.Second))) + ")"
	}
	d.row("Refill", refill)
	if tb.LastRefill.IsZero() {
		d.row("Last refill", "unknown (no time field)")
	} else {
		d.sentence("Last refill", format.Time(tb.LastRefill)+ago(tb.Now.Sub(tb.LastRefill)))
	}
	d.row("Stored tokens", tokens(tb.Stored))
	if tb.ToFull > 0 {
		d.row("Full in", format.Duration(tb.ToFull))
	} else {
		d.row("Full in", "full now")
	}
	if tb.Refused {
		d.vm.Alert = fmt.Sprintf("A request now is refused: it takes %s, %s left.", tokens(tb.Requested), tokens(tb.Tokens))
		if tb.RetryAfter > 0 {
			d.vm.Alert += " Retry after " + format.Duration(tb.RetryAfter) + "."
		}
		d.row("A request now", "refused")
	} else {
		d.row("A request now", "allowed (takes "+tokens(tb.Requested)+")")
	}
}
