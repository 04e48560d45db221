package browse

import (
	"context"
	"errors"
	"net"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/schema"
)

// Batch runs fn(i, c) for every i below n at once, each against a client c
// that does not send its commands itself: it waits until every fn still
// running has asked for its next command (or pipeline), then sends them
// all to real in one pipeline. Readers that go one command after another
// (STRLEN, then GET, then PTTL) thus cost, all n together, one round trip
// per step of the deepest of them instead of one per command of each: a
// live list's 50 role summaries are read in a handful of round trips.
// Batch returns when every fn has returned; roundTrips counts the
// pipelines it sent.
//
// fn must send its commands only through c, and must not wait for
// anything but c's replies (c's commands wait for the other fns'); c has
// no transactions, WATCH or subscriptions (a MULTI would interleave with
// the others' commands).
func Batch(ctx context.Context, real redis.Cmdable, n int, fn func(i int, c redis.Cmdable)) (roundTrips int) {
	if n <= 0 {
		return 0
	}
	b := &batcher{real: real, active: n}
	c := redis.NewClient(&redis.Options{
		// Never dialled: the hook answers every command.
		Addr:   "batch.invalid:0",
		Dialer: func(context.Context, string, string) (net.Conn, error) { return nil, errNoDial },
		// No connection is ever made, so none is kept or checked.
		MaxRetries: -1, PoolSize: 1, MinIdleConns: 0, DisableIdentity: true,
	})
	c.AddHook(b)
	defer c.Close()
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer b.leave(ctx)
			fn(i, c)
		}()
	}
	wg.Wait()
	return b.trips
}

var errNoDial = errors.New("browse.Batch: a batched client never dials")

// batcher is the barrier: commands queue until every running fn waits.
type batcher struct {
	real redis.Cmdable

	mu      sync.Mutex
	active  int // fns still running
	waiting int // fns waiting for the queued batch
	queue   []redis.Cmder
	done    chan struct{} // closed when the queued batch's replies are in
	trips   int
}

func (b *batcher) DialHook(next redis.DialHook) redis.DialHook { return next }

func (b *batcher) ProcessHook(redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		b.wait(ctx, []redis.Cmder{cmd})
		return cmd.Err()
	}
}

func (b *batcher) ProcessPipelineHook(redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		b.wait(ctx, cmds)
		for _, c := range cmds {
			if err := c.Err(); err != nil {
				return err
			}
		}
		return nil
	}
}

// wait queues cmds and returns when their replies are in.
func (b *batcher) wait(ctx context.Context, cmds []redis.Cmder) {
	b.mu.Lock()
	if b.done == nil {
		b.done = make(chan struct{})
	}
	done := b.done
	b.queue = append(b.queue, cmds...)
	b.waiting++
	b.flushIfReady(ctx) // unlocks
	<-done
}

// leave is a fn's end: the others may no longer wait for it.
func (b *batcher) leave(ctx context.Context) {
	b.mu.Lock()
	b.active--
	b.flushIfReady(ctx) // unlocks
}

// flushIfReady sends the queue when every running fn waits on it. Called
// with b.mu held; unlocks it.
func (b *batcher) flushIfReady(ctx context.Context) {
	if b.waiting == 0 || b.waiting < b.active {
		b.mu.Unlock()
		return
	}
	queue, done := b.queue, b.done
	b.queue, b.done, b.waiting = nil, nil, 0
	b.trips++
	b.mu.Unlock()
	pipe := b.real.Pipeline()
	for _, c := range queue {
		_ = pipe.Process(ctx, c)
	}
	_, _ = pipe.Exec(ctx) // each command carries its own reply or error
	close(done)
}

// Decoded is one key read by its family's role.
type Decoded = decode.Decoded

// DecodeAll reads keys[i] by the role of its family (ms[i]) at now, every
// key in one pipeline (decode.ReadMany): one round trip, two when a
// reader needs a second phase, whatever the number of keys.
func DecodeAll(ctx context.Context, conn *redisview.Conn, db int, keys []string, ms []schema.Match, now time.Time) []Decoded {
	items := make([]decode.Item, len(keys))
	for i := range keys {
		items[i] = decode.Item{Match: ms[i], Key: keys[i]}
	}
	return decode.ReadMany(ctx, conn.DB(db), decode.Env{Pack: conn.Pack(), DB: db}, items, now)
}
