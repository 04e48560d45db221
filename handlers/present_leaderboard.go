package handlers

import (
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/views"
	"github.com/keydeck/keydeck/views/format"
)

func init() {
	presenters[schema.RoleLeaderboard] = presentLeaderboard
}

// presentLeaderboard shows a decode.Leaderboard.
func presentLeaderboard(d *panel, state any) {
	lb := state.(*decode.Leaderboard)
	d.vm.Summary = format.Plural(lb.Card, "entry", "entries")
	d.row("Entries", format.Count(lb.Card))
	if lb.Retained > 0 {
		d.row("Kept", "top "+format.Count(int64(lb.Retained))+" (pruned)")
	}
	if lb.HasTop {
		top, _ := views.ShortName(lb.Top)
		d.vm.Summary += ", top " + top + " (" + format.Score(lb.TopScore) + ")"
		d.row("Top entry", top)
		d.row("Top score", format.Score(lb.TopScore))
	}
	if route.Linkable(d.key) {
		d.link("Live leaderboard", "open the leaderboard page", route.Window{Conn: d.conn, DB: d.db, Key: d.key, N: route.DefaultRows}.URL())
	}
}
