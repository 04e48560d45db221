package metrics

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/bans"
)

// BanHealth holds each ban list's health (bans.ReadHealth) as the keeper
// last read it: no page reads it in the background, so the keeper does,
// every Interval, and a scrape reads what it holds.
type BanHealth struct {
	mu   sync.Mutex
	held map[banKey]BanHeld
}

type banKey struct{ conn, list string }

// BanHeld is one list's last successful health read.
type BanHeld struct {
	Conn   string
	List   bans.List
	Health bans.Health
	Read   time.Time
}

// Held lists the lists read so far, by connection then list.
func (b *BanHealth) Held() []BanHeld {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]BanHeld, 0, len(b.held))
	for _, h := range b.held {
		out = append(out, h)
	}
	slices.SortFunc(out, func(x, y BanHeld) int { return cmp.Or(cmp.Compare(x.Conn, y.Conn), cmp.Compare(x.List.ID, y.List.ID)) })
	return out
}

// Refresh reads the health of every list of every connection's pack (a
// sensitive list is never read): STRLEN and SCARD in one pipeline, then
// BITCOUNT over the bloom in 256 KiB chunks, one pipeline. A list that
// could not be read keeps its last reading (its age grows); a list gone
// from the pack is dropped.
func (b *BanHealth) Refresh(ctx context.Context, conns []*redisview.Conn, now time.Time) {
	seen := map[banKey]bool{}
	for _, c := range conns {
		for _, l := range bans.Lists(c) {
			if l.Sensitive {
				continue
			}
			k := banKey{c.Name, l.ID}
			seen[k] = true
			h, err := bans.ReadHealth(ctx, c.DB(l.DB), l)
			if err != nil {
				continue
			}
			b.mu.Lock()
			if b.held == nil {
				b.held = map[banKey]BanHeld{}
			}
			b.held[k] = BanHeld{Conn: c.Name, List: l, Health: h, Read: now}
			b.mu.Unlock()
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for k := range b.held {
		if !seen[k] {
			delete(b.held, k)
		}
	}
}

func collectBans(e emitter, held []BanHeld, now time.Time) {
	for _, h := range held {
		c, n, id := h.Conn, db(h.List.DB), h.List.ID
		e.gauge(banMembers, float64(h.Health.Members), c, n, id)
		if h.Health.Counted {
			e.gauge(bloomFill, h.Health.Fill, c, n, id)
			e.gauge(bloomFP, h.Health.FalsePositive, c, n, id)
		}
		e.gauge(bloomExp, h.Health.Expected, c, n, id)
		e.gauge(bansAge, max(0, now.Sub(h.Read).Seconds()), c, n, id)
	}
}
