package console_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/redisview/console"
)

// countCommand counts the bare COMMAND calls a client sends.
type countCommand struct{ n atomic.Int64 }

func (h *countCommand) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *countCommand) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (h *countCommand) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if len(cmd.Args()) == 1 && strings.EqualFold(cmd.Name(), "command") {
			h.n.Add(1)
		}
		return next(ctx, cmd)
	}
}

// Concurrent misses read the table once (review L1).
func TestTablesConcurrentMissesReadOnce(t *testing.T) {
	rs := redistest.Start(t)
	cl := redis.NewClient(&redis.Options{Addr: rs.Addr, PoolSize: 16})
	defer cl.Close()
	h := &countCommand{}
	cl.AddHook(h)
	ts := &console.Tables{}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := ts.Get(context.Background(), "s", cl); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if n := h.n.Load(); n != 1 {
		t.Fatalf("8 concurrent misses sent COMMAND %d times, want once", n)
	}
}

// On a cluster, the console's write kind reads the table of one node and
// caches it under that node: previews do not read COMMAND again because
// INFO went to another node than COMMAND (review L1). Run by
// TestOnClusterNode, on its cluster.
func kindTableReadOnce(t *testing.T, cl *redistest.Cluster, conn *redisview.Conn) {
	ctx := context.Background()
	calls := func() int {
		n := 0
		for _, nd := range cl.Nodes {
			txt, _ := nd.Client(0).Info(ctx, "commandstats").Result()
			for _, line := range strings.Split(txt, "\n") {
				if rest, ok := strings.CutPrefix(line, "cmdstat_command:calls="); ok {
					c, _, _ := strings.Cut(rest, ",")
					k, _ := strconv.Atoi(c)
					n += k
				}
			}
		}
		return n
	}
	audit := redistest.Start(t).Client(15)
	r := action.New(audit, action.Options{})
	// go-redis's cluster client reads COMMAND once itself, on first use.
	conn.Client().Get(ctx, "warm")
	before := calls()
	for range 4 {
		req := action.Request{Conn: conn.Name, Args: map[string]string{console.ArgCommand: "SET k v"}}
		if _, err := r.Preview(ctx, action.Actor{User: "ann", Level: action.Admin}, conn, console.KindCommand, req); err != nil {
			t.Fatal(err)
		}
	}
	if n := calls() - before; n != 1 {
		t.Fatalf("4 previews read COMMAND %d times, want once", n)
	}
}
