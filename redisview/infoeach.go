package redisview

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/redis/go-redis/v9"
)

// InfoEach reads INFO (the sections given; none: the default ones) from
// every node that holds data: one server's, or each primary's of a
// cluster, in parallel, in slot order. A cluster client's own INFO goes
// to one node only, whose figures say nothing of the others: sum or
// combine what each primary says (a key count, a dirty counter).
func InfoEach(ctx context.Context, c redis.UniversalClient, sections ...string) ([]string, error) {
	cc, ok := c.(*redis.ClusterClient)
	if !ok {
		txt, err := c.Info(ctx, sections...).Result()
		if err != nil {
			return nil, err
		}
		return []string{txt}, nil
	}
	st := stateOf(cc)
	ranges, err := st.slots(ctx, cc)
	if err != nil {
		return nil, err
	}
	ps := primariesOf(ranges)
	out := make([]string, len(ps))
	errs := make([]error, len(ps))
	var wg sync.WaitGroup
	for i, p := range ps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			node, err := cc.MasterForKey(ctx, keyForSlot(p.FirstSlot))
			if err == nil {
				out[i], err = node.Info(ctx, sections...).Result()
			}
			if err != nil {
				errs[i] = fmt.Errorf("the primary of slot %d: %w", p.FirstSlot, err)
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		st.doubt(ctx, cc)
		return nil, err
	}
	return out, nil
}
