package search

import (
	"context"
	"errors"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/schema"
)

// decodeReq is one key to read by its family's role.
type decodeReq struct {
	DB  int
	Key string
	M   schema.Match
}

// decoded is what a decoder read of one key.
type decoded struct {
	Result decode.Result
	Err    error
}

// decodeMany reads every key of reqs by its role at now, all at once: the
// decoders' commands go out together, across databases, so the round
// trips are those of the deepest decoder (its steps), not one per command
// of each key. It is the user page's batch read until the decode package
// has its own; trips counts the round trips.
func decodeMany(ctx context.Context, conn *redisview.Conn, reqs []decodeReq, now time.Time) (out []decoded, trips int) {
	out = make([]decoded, len(reqs))
	pack := conn.Pack()
	trips = crossBatch(ctx, conn, len(reqs), func(i int) int { return reqs[i].DB }, func(i int, c redis.Cmdable) {
		r := reqs[i]
		out[i].Result, out[i].Err = decode.DecodeIn(ctx, c, decode.Env{Pack: pack, DB: r.DB}, r.M, r.Key, now)
	})
	return out, trips
}

// crossBatch runs fn(i, c) for every i below n at once, each against a
// client c of database dbOf(i) that does not send its commands itself: it
// waits until every fn still running has asked for its next command (or
// pipeline), then sends them all in one pipeline of the connection's
// cross-database client, each database's after its SELECT. It returns
// when every fn has returned, with the round trips it made.
//
// fn must send its commands only through c and wait for nothing but c's
// replies; c has no transactions, WATCH or subscriptions.
func crossBatch(ctx context.Context, conn *redisview.Conn, n int, dbOf func(int) int, fn func(i int, c redis.Cmdable)) int {
	if n <= 0 {
		return 0
	}
	b := &crossBatcher{conn: conn, active: n}
	clients := map[int]*redis.Client{}
	for i := range n {
		if db := dbOf(i); clients[db] == nil {
			clients[db] = batchClient(dbHook{b: b, db: db})
		}
	}
	defer func() {
		for _, c := range clients {
			c.Close()
		}
	}()
	var wg sync.WaitGroup
	for i := range n {
		c := clients[dbOf(i)]
		wg.Go(func() {
			defer b.leave(ctx)
			fn(i, c)
		})
	}
	wg.Wait()
	return b.trips
}

var errNoDial = errors.New("search: a batched client never dials")

// batchClient is a client that never dials: h answers every command.
func batchClient(h redis.Hook) *redis.Client {
	c := redis.NewClient(&redis.Options{
		Addr:       "batch.invalid:0",
		Dialer:     func(context.Context, string, string) (net.Conn, error) { return nil, errNoDial },
		MaxRetries: -1, PoolSize: 1, MinIdleConns: 0, DisableIdentity: true,
	})
	c.AddHook(h)
	return c
}

// queued is one command waiting for the batch, and its database.
type queued struct {
	db  int
	cmd redis.Cmder
}

// crossBatcher is the barrier: commands queue until every running fn waits.
type crossBatcher struct {
	conn *redisview.Conn

	mu      sync.Mutex
	active  int // fns still running
	waiting int // fns waiting for the queued batch
	queue   []queued
	done    chan struct{} // closed when the queued batch's replies are in
	trips   int
}

// dbHook queues the commands of one database's client.
type dbHook struct {
	b  *crossBatcher
	db int
}

func (h dbHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h dbHook) ProcessHook(redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.b.wait(ctx, h.db, []redis.Cmder{cmd})
		return cmd.Err()
	}
}

func (h dbHook) ProcessPipelineHook(redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.b.wait(ctx, h.db, cmds)
		for _, c := range cmds {
			if err := c.Err(); err != nil {
				return err
			}
		}
		return nil
	}
}

// wait queues cmds and returns when their replies are in.
func (b *crossBatcher) wait(ctx context.Context, db int, cmds []redis.Cmder) {
	b.mu.Lock()
	if b.done == nil {
		b.done = make(chan struct{})
	}
	done := b.done
	for _, c := range cmds {
		b.queue = append(b.queue, queued{db: db, cmd: c})
	}
	b.waiting++
	b.flushIfReady(ctx) // unlocks
	<-done
}

// leave is a fn's end: the others may no longer wait for it.
func (b *crossBatcher) leave(ctx context.Context) {
	b.mu.Lock()
	b.active--
	b.flushIfReady(ctx) // unlocks
}

// flushIfReady sends the queue when every running fn waits on it. Called
// with b.mu held; unlocks it.
func (b *crossBatcher) flushIfReady(ctx context.Context) {
	if b.waiting == 0 || b.waiting < b.active {
		b.mu.Unlock()
		return
	}
	queue, done := b.queue, b.done
	b.queue, b.done, b.waiting = nil, nil, 0
	b.trips++
	b.mu.Unlock()
	b.send(ctx, queue)
	close(done)
}

// send runs queue in one pipeline, grouped by database, each group after
// its SELECT. A failed SELECT leaves the connection on the database
// before: its group's commands get the SELECT's error, not another
// database's replies.
func (b *crossBatcher) send(ctx context.Context, queue []queued) {
	slices.SortStableFunc(queue, func(x, y queued) int { return x.db - y.db })
	pipe := b.conn.CrossDBPipeline()
	selects := map[int]*redis.StatusCmd{}
	for _, q := range queue {
		if selects[q.db] == nil {
			selects[q.db] = pipe.Select(ctx, q.db)
		}
		_ = pipe.Process(ctx, q.cmd)
	}
	_, _ = pipe.Exec(ctx) // each command carries its own reply or error
	for _, q := range queue {
		if err := selects[q.db].Err(); err != nil {
			q.cmd.SetErr(err)
		}
	}
}
