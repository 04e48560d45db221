package redisview

import (
	"context"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// keyspacePattern is every database's keyspace channel.
const keyspacePattern = "__keyspace@*__:*"

// openKeyspaceSubs subscribes to keyspace events where they are
// published: the server, or each primary of a cluster (a cluster node
// publishes the events of its own keys only, and a PSUBSCRIBE through the
// cluster client reaches one node). Each is confirmed; the caller closes
// them, also on error.
func (c *Conn) openKeyspaceSubs(ctx context.Context) ([]*redis.PubSub, error) {
	cc, ok := c.Client().(*redis.ClusterClient)
	if !ok {
		ps := c.Client().PSubscribe(ctx, keyspacePattern)
		_, err := ps.Receive(ctx)
		return []*redis.PubSub{ps}, err
	}
	var (
		mu   sync.Mutex
		subs []*redis.PubSub
	)
	err := cc.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
		ps := node.PSubscribe(ctx, keyspacePattern)
		mu.Lock()
		subs = append(subs, ps)
		mu.Unlock()
		_, err := ps.Receive(ctx)
		return err
	})
	return subs, err
}

// pingKeyspaceSubs checks every subscription's connection, counted as
// Keydeck's own commands.
func (c *Conn) pingKeyspaceSubs(ctx context.Context, subs []*redis.PubSub) error {
	for _, ps := range subs {
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		c.own.gate.enter()
		err := ps.Ping(pctx)
		if err == nil {
			c.own.done.Add(1)
		}
		c.own.gate.leave()
		cancel()
		if err != nil {
			return err
		}
	}
	return nil
}

// mergeKeyspaceChannels delivers every subscription's messages on one
// channel until ctx ends: each a *redis.Message, or a *redis.Subscription
// when go-redis subscribed again on a new connection after losing one
// (events published in between were lost); a nil message says one
// subscription's channel was closed (its node went away: the caller
// subscribes again).
func mergeKeyspaceChannels(ctx context.Context, subs []*redis.PubSub) <-chan any {
	if len(subs) == 1 {
		return subs[0].ChannelWithSubscriptions(redis.WithChannelHealthCheckInterval(0))
	}
	out := make(chan any)
	for _, ps := range subs {
		ch := ps.ChannelWithSubscriptions(redis.WithChannelHealthCheckInterval(0))
		go func() {
			for {
				var m any
				select {
				case <-ctx.Done():
					return
				case got, ok := <-ch:
					if ok {
						m = got
					}
				}
				select {
				case out <- m:
				case <-ctx.Done():
					return
				}
				if m == nil {
					return
				}
			}
		}()
	}
	return out
}
