package server

import (
	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/bulk"
	_ "github.com/keydeck/keydeck/redisview/transfer" // registers the import kind
)

// startImports is the bulk engine imports run on: job state in the audit
// Redis, recorded through the action runner, taking over the jobs of a
// Keydeck that stopped. If the bulk pages build an engine of their own,
// they and imports share that one (one engine per process).
func (s *Server) startImports(audit *redis.Client, reg *redisview.Registry, secret []byte) *bulk.Engine {
	s.imports = bulk.New(bulk.Options{Audit: audit, Runner: s.actions, Conns: reg.Get, Secret: secret,
		Clock: s.cfg.Clock, Log: s.log.With("component", "bulk")})
	s.bg.Go(func() {
		s.imports.Run(s.ctx) // until the console stops (Close cancels s.ctx, then waits for bg)
		s.imports.Close()
	})
	return s.imports
}
