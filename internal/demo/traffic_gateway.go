package demo

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// OrphanEvery: one reconciliation in this many leaves its reservation
// behind (an orphan, in no concurrency set).
const OrphanEvery = 15

type gatewayRequest struct {
	keyID, id string
	reserved  int64
	done      time.Time
}

// gatewayRequest admits one LLM call: rps bucket, then a pessimistic token
// reservation, the concurrency set and the monthly budget.
func (s *Simulator) gatewayRequest(ctx context.Context, now time.Time) error {
	id := pick(s.rng, gatewayKeyIDs)
	if s.rng.IntN(5) == 0 {
		id = gatewayKeyIDs[0] // the noisy client
	}
	res, err := GatewayTokenBucket.Run(ctx, s.gateway, []string{"q:rps:" + id}, gatewayRPSArgs(now.UnixMilli())...).Int64Slice()
	if err != nil || len(res) == 0 || res[0] != 1 {
		return err
	}
	r := gatewayRequest{keyID: id, id: requestID(s.rng), reserved: int64(512 * (1 + s.rng.IntN(16))),
		done: now.Add(time.Duration(500+s.rng.IntN(9000)) * time.Millisecond)}
	tokens := "q:tokens:" + id + ":" + gatewayMonth(now)
	_, err = s.gateway.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, "q:reserved:"+r.id, r.reserved, gatewayReservationTTL)
		p.SAdd(ctx, "q:conc:"+id, r.id)
		p.Expire(ctx, "q:conc:"+id, gatewayConcurrencyTTL)
		p.IncrBy(ctx, tokens, r.reserved)
		p.Expire(ctx, tokens, gatewayTokensTTL)
		return nil
	})
	// One request in twenty crashes before reconciliation; its reservation
	// is left for the TTL to clean up, which is what the TTL is for.
	if err == nil && s.rng.IntN(20) != 0 && len(s.requests) < 200 {
		s.requests = append(s.requests, r)
	}
	return err
}

// reconcileRequests settles finished calls: the reservation is replaced by
// the tokens actually used.
func (s *Simulator) reconcileRequests(ctx context.Context, now time.Time) error {
	var errs []error
	kept := s.requests[:0]
	for _, r := range s.requests {
		if now.Before(r.done) {
			kept = append(kept, r)
			continue
		}
		used := r.reserved * int64(20+s.rng.IntN(81)) / 100
		// One reconciliation in OrphanEvery takes a code path that removes
		// the request from its concurrency set but forgets its reservation:
		// the reservation is orphaned, holding its amount until its TTL.
		orphan := s.rng.IntN(OrphanEvery) == 0
		_, err := s.gateway.TxPipelined(ctx, func(p redis.Pipeliner) error {
			if !orphan {
				p.Del(ctx, "q:reserved:"+r.id)
			}
			p.SRem(ctx, "q:conc:"+r.keyID, r.id)
			p.IncrBy(ctx, "q:tokens:"+r.keyID+":"+gatewayMonth(now), used-r.reserved)
			return nil
		})
		errs = append(errs, err)
	}
	s.requests = kept
	return errors.Join(errs...)
}

func (s *Simulator) gatewayMisc(ctx context.Context, now time.Time) error {
	switch n := s.rng.IntN(40); {
	case n == 0:
		return s.gateway.Incr(ctx, "cfg:routing:version").Err()
	case n < 8:
		r := pick(s.rng, gatewayRoutes)
		return s.gateway.Set(ctx, "cb:hint:"+r.provider+":"+r.model, "open", gatewayHintTTL).Err()
	default:
		ns := pick(s.rng, []string{"chat-default", "faq-bot", "summarize"})
		k, v := cacheEntry(s.rng, ns, now)
		return s.gateway.Set(ctx, k, v, cacheNamespaces[ns]).Err()
	}
}
