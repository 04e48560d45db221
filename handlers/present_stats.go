package handlers

import (
	"strconv"
	"strings"

	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/views"
	"github.com/keydeck/keydeck/views/format"
)

func init() {
	presenters[schema.RoleStats] = presentStats
}

// presentStats shows a decode.Stats.
func presentStats(d *panel, state any) {
	parts := make([]string, 0, 2)
	for _, sf := range state.(*decode.Stats).Fields {
		v := "absent"
		if sf.Present {
			v = views.EscapeName(sf.Value)
			if n, err := strconv.ParseInt(sf.Value, 10, 64); err == nil {
				v = format.Count(n)
			}
			if len(parts) < 2 {
				parts = append(parts, sf.Name+" "+v)
			}
		}
		d.row(sf.Name, v)
	}
	d.vm.Summary = strings.Join(parts, ", ")
	if d.vm.Summary == "" {
		d.vm.Summary = "no counters yet"
	}
}
