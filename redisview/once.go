package redisview

import (
	"time"

	"github.com/redis/go-redis/v9"
)

// Once is a new client of srv (a server Conn.Server resolved) and database
// db (0 on a cluster node) that sends each command once. The pooled
// clients retry a command whose reply timed out or whose connection broke
// (MaxRetries 1, ReadTimeout 2 s): harmless for Keydeck's own reads,
// wrong for a command a person typed, which may not be idempotent and may
// run long (FLUSHALL on millions of keys, DEBUG SLEEP): sent twice it
// runs twice, flushing what the application wrote in between. Once never
// retries, waits up to readTimeout for a reply and no longer than the
// command's context, and counts its commands as Keydeck's own traffic;
// a lost reply is the caller's to report as "may have run". Close it
// after use.
func (c *Conn) Once(srv Server, db int, readTimeout time.Duration) *redis.Client {
	c.mu.Lock()
	o := *c.opts
	c.mu.Unlock()
	o.MaxRetries = -1
	o.ReadTimeout = readTimeout
	o.ContextTimeoutEnabled = true
	o.PoolSize, o.MinIdleConns, o.MaxIdleConns = 1, 0, 0
	if c.IsCluster() {
		o.Addr, o.DB = srv.Node.Addr, 0
		o.Dialer = hostTLSDialer(c.opts, c.target)
		cl := redis.NewClient(&o)
		cl.AddHook(ownHook{c.own})
		cl.AddHook(connHooks{c})
		return cl
	}
	o.DB = db
	cl := c.newClient(&o)
	c.mu.Lock()
	for _, h := range c.hooks {
		cl.AddHook(h)
	}
	c.mu.Unlock()
	return cl
}
