package decode

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview/schema"
)

// Stats is a hash of cumulative counters, the fields the pack names.
type Stats struct {
	Fields []StatField
}

// StatField is one named counter; Present is false when the field is absent.
type StatField struct {
	Name    string
	Value   string
	Present bool
}

func init() {
	register(schema.RoleStats, nil, func(ctx context.Context, pipe redis.Pipeliner, in *Input) finish {
		p, ok := in.Match.Family.Params.(*schema.StatsParams)
		if !ok {
			return func() (any, step, error) { return nil, nil, nil }
		}
		if len(p.Fields) == 0 {
			return func() (any, step, error) { return done(nil, notDecodable("the pack names no fields")) }
		}
		hm := pipe.HMGet(ctx, in.Key, p.Fields...)
		return func() (any, step, error) {
			vals, err := hm.Result()
			if err != nil {
				return done(nil, err)
			}
			st := &Stats{}
			for i, f := range p.Fields {
				v, ok := vals[i].(string)
				if ok && len(v) > maxSmall {
					v = v[:maxSmall]
				}
				st.Fields = append(st.Fields, StatField{Name: f, Value: v, Present: ok})
			}
			return done(st, nil)
		}
	})
}
