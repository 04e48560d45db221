package value_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview/value"
)

func TestStreamGroups(t *testing.T) {
	c, rc := open(t)
	ctx := context.Background()
	for i := range 5 {
		rc.XAdd(ctx, &redis.XAddArgs{Stream: "orders", Values: []any{"n", i}})
	}
	rc.XGroupCreate(ctx, "orders", "billing", "0")
	rc.XGroupCreate(ctx, "orders", "idle", "$")
	rc.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "billing", Consumer: "alice", Streams: []string{"orders", ">"}, Count: 2})
	rc.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "billing", Consumer: "bob", Streams: []string{"orders", ">"}, Count: 1})

	sg := value.ReadStreamGroups(ctx, c, 0, "orders")
	if sg.Err != "" || len(sg.Groups) != 2 {
		t.Fatalf("groups = %+v", sg)
	}
	g := sg.Groups[0]
	if g.Name != "billing" || g.Consumers != 2 || g.Pending != 3 || g.EntriesRead != 3 || !g.Lag.OK || g.Lag.V != 2 {
		t.Errorf("billing = %+v", g)
	}
	if got := fmt.Sprint(len(g.ConsumerList), g.Summary.Count, g.Summary.PerConsumer, len(g.Oldest)); got != "2 3 [{alice 2} {bob 1}] 3" {
		t.Errorf("consumers, summary, oldest = %s", got)
	}
	// Before 7.2 the server does not say when a consumer last read.
	info, _ := rc.Info(ctx, "server").Result()
	old := strings.Contains(info, "redis_version:6.") || strings.Contains(info, "redis_version:7.0.") || strings.Contains(info, "redis_version:7.1.")
	if c := g.ConsumerList[0]; c.Name != "alice" || c.Pending != 2 || c.Idle < 0 || old != (c.Inactive == -1) {
		t.Errorf("consumer = %+v (server before 7.2: %v)", c, old)
	}
	if o := g.Oldest[0]; o.ID != g.Summary.Lower || o.Consumer != "alice" || o.Deliveries != 1 || o.Idle < 0 {
		t.Errorf("oldest = %+v", o)
	}
	if idle := sg.Groups[1]; idle.Name != "idle" || idle.Pending != 0 || len(idle.Oldest) != 0 || idle.PendingErr != "" {
		t.Errorf("idle group = %+v", idle)
	}
	if none := value.ReadStreamGroups(ctx, c, 0, "missing"); none.Err == "" {
		t.Errorf("a missing stream's groups read without error")
	}
}
