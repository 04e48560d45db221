package demo

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// consumeVertique takes tokens from a bucket as Bucket4j's compare-and-swap
// proxy does, then refreshes the TTL as Vertique does after every write.
func (s *Simulator) consumeVertique(ctx context.Context, now time.Time) error {
	p := s.policies[s.rng.IntN(len(s.policies))]
	if s.rng.IntN(2) == 0 {
		p = s.policies[0] // api traffic dominates
	}
	caller := pick(s.rng, p.Callers)
	if s.rng.IntN(30) == 0 {
		caller = append(append([]string{}, caller[:len(caller)-1]...), pick(s.rng, s.callers))
	}
	key := p.key(s.secret, caller)
	ttl := vertiqueTTL(p.Bandwidths)
	nowNanos := now.UnixMilli() * 1e6
	for range 1 + s.rng.IntN(4) {
		raw, err := s.vertique.Get(ctx, key).Result()
		if errors.Is(err, redis.Nil) {
			st := p.newState(nowNanos)
			st.tryConsume(1, nowNanos)
			ok, err := s.vertique.SetNX(ctx, key, EncodeBucketState(st), 0).Result()
			if err != nil || !ok {
				return err
			}
		} else if err != nil {
			return err
		} else {
			st, err := decodeBucketState([]byte(raw))
			if err != nil || !st.tryConsume(1, nowNanos) {
				return nil // a layout we do not own, or no tokens: leave it alone
			}
			swapped, err := bucket4jCompareAndSet.Run(ctx, s.vertique, []string{key}, raw, EncodeBucketState(st)).Int()
			if err != nil || swapped == 0 {
				return err
			}
		}
		if err := s.vertique.PExpire(ctx, key, ttl).Err(); err != nil {
			return err
		}
	}
	return nil
}
