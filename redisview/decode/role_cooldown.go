package decode

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview/schema"
)

// Cooldown blocks an action while it exists.
type Cooldown struct {
	TTL  time.Duration
	Ends time.Time // now + TTL; zero without a TTL
}

func init() {
	register(schema.RoleCooldown, always(ClassLock), func(ctx context.Context, pipe redis.Pipeliner, in *Input) finish {
		pttl := pipe.PTTL(ctx, in.Key)
		return func() (any, step, error) {
			d, err := pttl.Result()
			if err != nil {
				return done(nil, err)
			}
			if d == -2 { // go-redis passes PTTL's -2 (no such key) through
				return done(nil, notDecodable("the key is gone"))
			}
			cd := &Cooldown{TTL: d}
			if d >= 0 {
				cd.Ends = in.Now.Add(d).UTC()
			}
			return done(cd, nil)
		}
	})
	// A cooldown's row is a lock's: its TTL, and the start of its value.
	registerRow(schema.RoleCooldown, readHeldRow, HeldRow{})
	registerReset(schema.RoleCooldown, Reset{Present: "blocks the action while it exists", Refuses: Reached})
}
