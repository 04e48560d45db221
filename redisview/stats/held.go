package stats

import (
	"cmp"
	"slices"
)

// Held is one database's statistics as the pool holds them in memory.
type Held struct {
	// Detail is the latest completed pass (see Known).
	Detail DBDetail
	// Running: a sweeper of the database runs now; Seen is how many keys
	// its running pass has read so far.
	Running bool
	Seen    int64
}

// Held lists what the pool knows without reading anything: every database
// whose running sweeper, or one stopped within recentFor, completed a
// pass. A database never swept is not listed (its counts are unknown, not
// zero). It sends no Redis command.
func (p *Sweepers) Held() []Held {
	keys := map[sweepKey]bool{}
	p.pool.Each(func(k sweepKey, _ *Sweeper) { keys[k] = true })
	p.mu.Lock()
	for k := range p.recent {
		keys[k] = true
	}
	p.mu.Unlock()
	var out []Held
	for k := range keys {
		d, ok := p.Known(k.conn, k.db)
		if !ok {
			continue
		}
		h := Held{Detail: d}
		if s, running := p.pool.Get(k); running {
			s.mu.Lock()
			h.Running = true
			if s.cur != nil {
				h.Seen = s.cur.seen
			}
			s.mu.Unlock()
		}
		out = append(out, h)
	}
	slices.SortFunc(out, func(a, b Held) int {
		return cmp.Or(cmp.Compare(a.Detail.Conn, b.Detail.Conn), cmp.Compare(a.Detail.DB, b.Detail.DB))
	})
	return out
}
