package live

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// overviewSource mimics a real dashboard source: one pipelined round trip
// per poll, rendered to bytes.
func overviewSource(c *redis.Client) Source {
	return SourceFunc(func(ctx context.Context) ([]byte, error) {
		var size *redis.IntCmd
		var info *redis.StringCmd
		_, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
			size = p.DBSize(ctx)
			info = p.Info(ctx, "keyspace")
			return nil
		})
		if err != nil {
			return nil, err
		}
		return fmt.Appendf(nil, "dbsize=%d\n%s", size.Val(), info.Val()), nil
	})
}

func TestRedisOnePipelinePerTick(t *testing.T) {
	const interval = 50 * time.Millisecond
	ctx := context.Background()
	s := redistest.Start(t)
	c := s.Client(0)
	for i := range 3 {
		if err := c.Set(ctx, fmt.Sprint("k", i), "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	before, err := s.CommandCalls(ctx)
	if err != nil {
		t.Fatal(err)
	}

	h := newHub(t, interval)
	start := time.Now()
	readers := make([]*reader, 100)
	unsubs := make([]func(), len(readers))
	for i := range readers {
		readers[i] = startReader(t)
		unsubs[i] = h.Subscribe("overview:r", func() Source { return overviewSource(c) }, readers[i].box)
	}
	seeAll := func(want string) {
		t.Helper()
		for i, r := range readers {
			waitFor(t, fmt.Sprintf("reader %d to see %s", i, want), func() bool {
				v, _ := r.latest("overview:r")
				return strings.HasPrefix(v, want+"\n")
			})
		}
	}
	seeAll("dbsize=3")
	waitFor(t, "10 polls", func() bool { return h.Stats().TotalPolls >= 10 })

	// A write plus a Kick reaches every subscriber without waiting a tick.
	if err := c.Set(ctx, "k3", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	h.Kick("overview:r")
	seeAll("dbsize=4")

	for _, u := range unsubs {
		u()
	}
	waitFor(t, "the poller to stop", func() bool { return h.Stats().Running == 0 })
	ticks := int64(time.Since(start) / interval)

	after, err := s.CommandCalls(ctx)
	if err != nil {
		t.Fatal(err)
	}
	dbsize := after["dbsize"] - before["dbsize"]
	// +2: the immediate first poll and the kicked one.
	if dbsize < 1 || dbsize > ticks+2 {
		t.Errorf("redis saw %d DBSIZE calls over %d ticks with 100 subscribers, want 1..%d (one pipeline per tick)", dbsize, ticks, ticks+2)
	}
	t.Logf("%d DBSIZE calls over %d ticks, %d polls", dbsize, ticks, h.Stats().TotalPolls)
}
