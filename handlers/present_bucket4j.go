package handlers

import (
	"fmt"
	"github.com/keydeck/keydeck/redisview/limits"
	"strconv"
	"strings"

	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/views"
	"github.com/keydeck/keydeck/views/format"
)

func init() {
	presenters[schema.RoleBucket4j] = presentBucket4j
	limitPresenters[schema.RoleBucket4j] = limitPresenter{
		rank: 4,
		limit: func(*schema.Family) string {
			return "Bucket4j buckets: each state carries its own bandwidths (the limiting one is shown)"
		},
		level: func(_ *schema.Family, st limits.State) string {
			return fmt.Sprintf("%s of %s tokens left", num(st.Tokens), num(st.Limit))
		},
	}
}

// presentBucket4j shows a decode.Bucket4j.
func presentBucket4j(d *panel, state any) {
	b := state.(*decode.Bucket4j)
	capacity := int64(0)
	for _, bw := range b.Bandwidths {
		if capacity == 0 || bw.Capacity < capacity {
			capacity = bw.Capacity
		}
	}
	d.vm.Summary = fmt.Sprintf("%s of %s tokens now", format.Count(b.Tokens), format.Count(capacity))
	d.row("Tokens now", format.Count(b.Tokens))
	d.row("Read at", format.Clock(b.Now))
	if b.ToFull > 0 {
		d.row("Full in", format.Duration(b.ToFull))
	} else {
		d.row("Full in", "full now")
	}
	d.row("Consumed (total)", format.Count(b.Consumed))
	d.row("TTL", format.TTL(b.TTL))
	if b.HasVersion {
		d.row("Configuration version", strconv.FormatInt(b.Version, 10))
	}
	for i, bw := range b.Bandwidths {
		name := "Bandwidth " + strconv.Itoa(i+1)
		if bw.ID != "" {
			name += " (" + views.EscapeName(bw.ID) + ")"
		}
		kind := "greedy"
		if bw.Intervally {
			kind = "intervally"
		}
		d.sentence(name, fmt.Sprintf("%s of %s; refill %s per %s, %s; last refill %s", format.Count(bw.Tokens), format.Count(bw.Capacity),
			format.Count(bw.RefillTokens), format.Duration(bw.RefillPeriod), kind, format.Time(bw.LastRefill)))
	}
	if b.Tokens <= 0 {
		d.vm.Alert = "No tokens now: a request is refused until the bucket refills."
	}
	if b.ClockSkew {
		d.vm.Alert = strings.TrimSpace(d.vm.Alert + " A last refill is more than a day from now: the writer may use a custom clock, so the refill shown may be wrong.")
	}
}
