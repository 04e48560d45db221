package stats

import (
	"context"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// A server that knows MEMORY USAGE but not its SAMPLES option refuses it
// for every key of the first batch: that switches to plain MEMORY USAGE,
// never memory off with a raw "syntax error" on the page.
func TestMemoryWithoutSamplesOption(t *testing.T) {
	m := miniredis.RunT(t)
	c := redis.NewClient(&redis.Options{Addr: m.Addr(), DisableIdentity: true})
	t.Cleanup(func() { _ = c.Close() })
	ctx := context.Background()
	for _, k := range []string{"a", "b", "c"} {
		c.Set(ctx, k, "value", 0)
	}
	var mode memoryMode
	if _, err := mode.inspect(ctx, c, []string{"a", "b", "c"}); err != nil {
		t.Fatal(err)
	}
	if mode.off || mode.Why != "" || !mode.noSamples {
		t.Fatalf("after the first batch: %+v", mode)
	}
	batch, err := mode.inspect(ctx, c, []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range batch {
		if k.Memory <= 0 {
			t.Fatalf("no memory for %s: %+v", k.Name, k)
		}
	}
}

// A key that expired between TYPE and MEMORY USAGE (two round trips of
// the pipelined read) is gone: MEMORY USAGE answers nil, and the sweep
// must not count it as a key of its family with no memory.
func TestKeyGoneBeforeMemoryUsageIsNotCounted(t *testing.T) {
	var mode memoryMode
	cmd := redis.NewIntCmd(context.Background())
	cmd.SetErr(redis.Nil)
	info := KeyInfo{Name: "lock:x", Type: "string", Memory: -1, Elements: 3, TTL: -1}
	mode.absorbMemory(cmd, &info, true)
	if info.Type != "" {
		t.Fatalf("a key MEMORY USAGE did not find is still typed %q", info.Type)
	}
	acc := newAccumulator(time.Now(), 0)
	acc.add(0, info, nil)
	if acc.seen != 0 || acc.unmCount != 0 {
		t.Fatalf("the vanished key was counted: seen %d, unmatched %d", acc.seen, acc.unmCount)
	}
}
