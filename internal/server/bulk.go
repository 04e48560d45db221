package server

import (
	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview/bulk"
)

// startBulk builds the bulk job engine on the audit Redis and runs its
// takeover of the jobs a stopped Keydeck left, until the server stops;
// its jobs are stopped and awaited with the background work (Close), so
// their leases lapse for the next Keydeck to take them over.
func (s *Server) startBulk(cfg Config, audit *redis.Client) *bulk.Engine {
	o := cfg.Bulk
	o.Audit, o.Runner, o.Conns, o.Clock = audit, s.actions, s.reg.Get, cfg.Clock
	o.Log = s.log.With("component", "bulk")
	e := bulk.New(o)
	s.bg.Go(func() {
		e.Run(s.ctx)
		e.Close()
	})
	return e
}
