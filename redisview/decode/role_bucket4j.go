package decode

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview/schema"
)

func init() {
	register(schema.RoleBucket4j, always(ClassLimit), readBucket4j)
}

// readBucket4j reads the state with its length (GETRANGE of at most
// maxBucket4j bytes: a longer value is not read); an unknown layout is
// ErrNotDecodable, saying only the length.
func readBucket4j(ctx context.Context, p redis.Pipeliner, in *Input) finish {
	strlen := p.StrLen(ctx, in.Key)
	val := p.GetRange(ctx, in.Key, 0, maxBucket4j-1)
	pttl := p.PTTL(ctx, in.Key)
	return func() (any, step, error) {
		if err := firstErr(strlen); err != nil {
			return done(nil, err)
		}
		if n := strlen.Val(); n > maxBucket4j {
			return done(nil, notDecodable("unrecognised state (%d bytes)", n))
		}
		if err := firstErr(val, pttl); err != nil {
			return done(nil, err)
		}
		if pttl.Val() == -2 {
			return done(nil, notDecodable("the key is gone"))
		}
		s := val.Val()
		b, err := DecodeBucket4j([]byte(s), in.Now)
		if err != nil {
			return done(nil, notDecodable("unrecognised state (%d bytes)", len(s)))
		}
		b.TTL = pttl.Val()
		return done(&b, nil)
	}
}
