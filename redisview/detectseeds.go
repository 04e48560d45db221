package redisview

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// infoFromSeeds asks a cluster URL's other seeds (?addr=) for INFO cluster
// when its first host did not answer (err): the seeds are there so that
// Keydeck reaches the cluster without that node. It answers the first
// seed's reply, or err when none answers.
func (c *Conn) infoFromSeeds(ctx context.Context, err error) (string, error) {
	for _, addr := range c.target.seeds[min(1, len(c.target.seeds)):] {
		o := *c.opts
		o.Addr = addr
		if d := hostTLSDialer(c.opts, c.target); d != nil {
			o.Dialer = d
		}
		tmp := redis.NewClient(&o)
		tmp.AddHook(ownHook{c.own})
		txt, serr := tmp.Info(ctx, "cluster").Result()
		_ = tmp.Close()
		if serr == nil {
			return txt, nil
		}
	}
	return "", err
}
