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
	if g.Name != "billing" || g.Consumers != 2 || g.Pending != 3 || !g.EntriesRead.OK || g.EntriesRead.V != 3 || !g.Lag.OK || g.Lag.V != 2 {
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
	// Created at $: the server answers entries-read nil, not 0.
	if idle := sg.Groups[1]; idle.EntriesRead.OK || !strings.Contains(idle.EntriesRead.Why, "unknown") {
		t.Errorf("entries read of a group created at $ = %+v, want unknown", idle.EntriesRead)
	}
	if none := value.ReadStreamGroups(ctx, c, 0, "missing"); none.Err == "" {
		t.Errorf("a missing stream's groups read without error")
	}
}

// A group with more consumers than MaxConsumersRead is not asked for
// them: the panel says so and still counts its pending entries.
func TestStreamGroupsSkipManyConsumers(t *testing.T) {
	c, rc := open(t)
	ctx := context.Background()
	rc.XAdd(ctx, &redis.XAddArgs{Stream: "busy", Values: []any{"n", 1}})
	rc.XGroupCreate(ctx, "busy", "g", "0")
	p := rc.Pipeline()
	for i := range value.MaxConsumersRead + 1 {
		p.XGroupCreateConsumer(ctx, "busy", "g", fmt.Sprint("c", i))
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	rc.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "c0", Streams: []string{"busy", ">"}})
	g := value.ReadStreamGroups(ctx, c, 0, "busy").Groups[0]
	if g.Skipped == "" || len(g.ConsumerList) != 0 || g.Summary.Count != 1 || len(g.Oldest) != 1 {
		t.Errorf("a group of %d consumers = %+v", g.Consumers, g)
	}
}
