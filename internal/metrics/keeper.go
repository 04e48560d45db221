package metrics

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/keydeck/keydeck/internal/clock"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/limits"
	"github.com/keydeck/keydeck/redisview/quotas"
	"github.com/keydeck/keydeck/redisview/stats"
)

// DefaultInterval is how often the keeper reads the bans' health and
// looks for connections and databases it does not hold yet.
const DefaultInterval = 30 * time.Second

// Keeper is /metrics's standing viewer, run by the composition root: so
// that what the exposition reports is read while nobody has a page open,
// it holds (Hold) the workers the pages would start — each connection's
// limit sweep and quota walk, and the statistics sweep of each database its
// pack names — at their own budgets, and reads the one figure no worker
// keeps, the bans' health, every Interval. A scrape reads only what they
// hold.
type Keeper struct {
	Conns    Conns
	Sweeps   *stats.Sweepers
	Limits   *limits.Pool
	Quotas   *quotas.Walkers
	Bans     *BanHealth
	Hold     bool
	Interval time.Duration
	Clock    clock.Clock
}

// Run keeps the workers and refreshes the bans' health until ctx ends,
// then releases what it held.
func (k *Keeper) Run(ctx context.Context) {
	clk := clock.Or(k.Clock)
	interval := k.Interval
	if interval <= 0 {
		interval = DefaultInterval
	}
	held := map[string]func(){}
	defer func() {
		for _, release := range held {
			release()
		}
	}()
	for ctx.Err() == nil {
		if k.Hold {
			k.hold(held)
		}
		if k.Bans != nil && k.Conns != nil {
			rctx, cancel := context.WithTimeout(ctx, interval)
			k.Bans.Refresh(rctx, k.Conns.All(), clk.Now())
			cancel()
		}
		clock.Sleep(ctx, clk, k.wait(interval))
	}
}

// wait is interval, or a second while a connection has no pack yet: its
// pack is chosen moments after start, and its workers and lists follow.
func (k *Keeper) wait(interval time.Duration) time.Duration {
	if k.Conns == nil {
		return interval
	}
	for _, c := range k.Conns.All() {
		if c.Pack() == nil {
			return min(interval, time.Second)
		}
	}
	return interval
}

// hold acquires the workers not held yet: a connection's pack may be
// detected after the keeper started.
func (k *Keeper) hold(held map[string]func()) {
	for _, c := range k.Conns.All() {
		if k.Limits != nil {
			holdOnce(held, "limits/"+c.Name, func() func() { _, r := k.Limits.Acquire(c); return r })
		}
		if k.Quotas != nil {
			holdOnce(held, "quotas/"+c.Name, func() func() { _, r := k.Quotas.Acquire(c); return r })
		}
		if k.Sweeps == nil {
			continue
		}
		for _, db := range packDBs(c) {
			holdOnce(held, fmt.Sprintf("stats/%s/%d", c.Name, db), func() func() { _, r := k.Sweeps.Acquire(c, db); return r })
		}
	}
}

func holdOnce(held map[string]func(), key string, acquire func() func()) {
	if _, ok := held[key]; !ok {
		held[key] = acquire()
	}
}

// packDBs are the databases the connection's pack names (none before a
// pack is chosen).
func packDBs(c *redisview.Conn) []int {
	p := c.Pack()
	if p == nil {
		return nil
	}
	dbs := p.SampleDBs()
	for _, f := range p.Families {
		for _, db := range f.DBs {
			if !slices.Contains(dbs, db) {
				dbs = append(dbs, db)
			}
		}
	}
	slices.Sort(dbs)
	return dbs
}
