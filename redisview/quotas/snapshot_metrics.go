package quotas

import (
	"cmp"
	"slices"

	"github.com/keydeck/keydeck/redisview"
)

// Snapshots copies what every running walker knows (lingering ones
// included), by connection name. It sends no Redis command.
func (ws *Walkers) Snapshots() []Snapshot {
	var out []Snapshot
	ws.pool.Each(func(_ *redisview.Conn, w *Walker) { out = append(out, w.Snapshot()) })
	slices.SortFunc(out, func(a, b Snapshot) int { return cmp.Compare(a.Conn, b.Conn) })
	return out
}
