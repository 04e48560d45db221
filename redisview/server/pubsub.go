package server

import (
	"context"
	"slices"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview"
)

// MaxChannels bounds the channels a page lists (and asks NUMSUB about).
const MaxChannels = 200

// Channel is one active channel and its subscribers.
type Channel struct {
	Name        string // bytes
	Subscribers redisview.Opt[int64]
}

// Channels is a server's Pub/Sub state.
type Channels struct {
	// Channels are the first MaxChannels active channels matching the
	// filter, by name; Total is how many matched.
	Channels []Channel
	Total    int
	// NumPat is how many patterns clients subscribe to (PUBSUB NUMPAT).
	NumPat redisview.Opt[int64]
	Err    string
	Down   bool
}

// ReadChannels lists the active channels matching pattern ("" all, a
// glob as PUBSUB CHANNELS takes it), their subscriber counts and the
// number of patterns subscribed to. The server answers every matching
// channel at once (PUBSUB CHANNELS has no COUNT); the page keeps
// MaxChannels of them and says how many there were.
func ReadChannels(ctx context.Context, srv redisview.Server, pattern string) Channels {
	cl := srv.Client()
	if pattern == "" {
		pattern = "*"
	}
	var chans *redis.StringSliceCmd
	var numpat *redis.IntCmd
	cmds, err := cl.Pipelined(ctx, func(p redis.Pipeliner) error {
		chans = p.PubSubChannels(ctx, pattern)
		numpat = p.PubSubNumPat(ctx)
		return nil
	})
	var out Channels
	if err := redisview.PipelineErr(cmds, err); err != nil && redisview.IsConnErr(err) {
		out.Err, out.Down = "the server did not answer: "+err.Error(), true
		return out
	}
	if err := numpat.Err(); err != nil {
		out.NumPat = redisview.None[int64](redisview.Refusal("PUBSUB NUMPAT", err))
	} else {
		out.NumPat = redisview.Some(numpat.Val())
	}
	if err := chans.Err(); err != nil {
		out.Err = redisview.Refusal("PUBSUB CHANNELS", err)
		return out
	}
	names := chans.Val()
	slices.Sort(names)
	out.Total = len(names)
	if len(names) > MaxChannels {
		names = names[:MaxChannels]
	}
	if len(names) == 0 {
		return out
	}
	counts, err := cl.PubSubNumSub(ctx, names...).Result()
	for _, n := range names {
		c := Channel{Name: n}
		switch v, ok := counts[n]; {
		case err != nil:
			c.Subscribers = redisview.None[int64](redisview.Refusal("PUBSUB NUMSUB", err))
		case ok:
			c.Subscribers = redisview.Some(v)
		default:
			c.Subscribers = redisview.None[int64]("not answered")
		}
		out.Channels = append(out.Channels, c)
	}
	return out
}
