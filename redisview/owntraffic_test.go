package redisview

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/redistest"
)

// serverTotal reads total_commands_processed with a client of its own.
// The INFO itself is counted by the server only in the next reading.
func serverTotal(t *testing.T, cl *redis.Client) int64 {
	t.Helper()
	txt, err := cl.Info(context.Background(), "stats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(txt, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "total_commands_processed:"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no total_commands_processed")
	return 0
}

// Keydeck's count of its own commands agrees exactly with the server's
// total_commands_processed, however the commands travel: one at a time,
// pipelined, across databases, in transactions (committed, aborted by
// WATCH, discarded by EXECABORT), refused before running (unknown command,
// wrong arity, ACL), failing while running (WRONGTYPE), scripts with their
// inner calls reported, connection set-up included.
func TestOwnCountMatchesTheServer(t *testing.T) {
	ctx := context.Background()
	s := redistest.Start(t)
	admin := s.Client(0)
	if err := admin.Do(ctx, "ACL", "SETUSER", "viewer", "on", ">pw", "~*", "+@read", "+@connection", "+select", "-info", "-config").Err(); err != nil {
		t.Fatal(err)
	}
	t0 := serverTotal(t, admin)
	var adminCmds int64 // the admin client's commands after t0, its INFOs included

	c := openConn(t, s.URL(0))
	viewer := openConn(t, "redis://viewer:pw@"+s.Addr+"/0")
	cl := c.Client()

	cl.Set(ctx, "s", "v", 0)
	cl.Get(ctx, "missing") // redis.Nil is a reply
	cl.Do(ctx, "NOSUCHCOMMAND")
	cl.Do(ctx, "GET")                             // wrong arity
	cl.LPush(ctx, "s", "x")                       // WRONGTYPE: runs, fails
	cl.Do(ctx, "CONFIG", "NOSUCH")                // unknown subcommand
	cl.Do(ctx, "SELECT", "99")                    // runs, out of range
	cl.EvalSha(ctx, strings.Repeat("0", 40), nil) // NOSCRIPT: runs
	p := cl.Pipeline()
	for i := range 50 {
		p.Incr(ctx, "n"+strconv.Itoa(i%3))
	}
	p.Do(ctx, "NOSUCHCOMMAND")
	if _, err := p.Exec(ctx); err == nil {
		t.Fatal("pipeline with an unknown command: no error")
	}
	x := c.CrossDBPipeline()
	for db := range 4 {
		x.Select(ctx, db)
		x.DBSize(ctx)
	}
	if _, err := x.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DB(3).TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, "a", "1", 0)
		p.Incr(ctx, "a")
		p.LPush(ctx, "a", "x") // WRONGTYPE inside EXEC: runs
		return nil
	}); err == nil {
		t.Fatal("transaction: no WRONGTYPE")
	}
	if _, err := cl.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, "b", "1", 0)
		p.Do(ctx, "NOSUCHCOMMAND") // EXECABORT: nothing queued runs
		return nil
	}); err == nil {
		t.Fatal("EXECABORT: no error")
	}
	// WATCH, then another client changes the key: EXEC aborts.
	err := cl.Watch(ctx, func(tx *redis.Tx) error {
		tx.Get(ctx, "w")
		admin.Set(ctx, "w", "theirs", 0)
		adminCmds++
		_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, "w", "mine", 0)
			p.Incr(ctx, "w2")
			return nil
		})
		return err
	}, "w")
	if !errors.Is(err, redis.TxFailedErr) {
		t.Fatalf("watched transaction: %v", err)
	}
	// A script: the caller reports its inner calls.
	script := redis.NewScript(`redis.call('SET', KEYS[1], '1'); redis.call('INCR', KEYS[1]); return redis.call('GET', KEYS[1])`)
	if err := script.Run(ctx, cl, []string{"sc"}).Err(); err != nil { // EVALSHA (NOSCRIPT), then EVAL
		t.Fatal(err)
	}
	c.ScriptCalls(3)
	if err := script.Run(ctx, cl, []string{"sc"}).Err(); err != nil { // EVALSHA
		t.Fatal(err)
	}
	c.ScriptCalls(3)
	// A least-privilege user: refused commands do not run.
	vc := viewer.Client()
	vc.Get(ctx, "s")
	vc.Info(ctx)
	vc.ConfigGet(ctx, "maxmemory")
	vp := viewer.CrossDBPipeline()
	vp.Select(ctx, 2)
	vp.Info(ctx)
	vp.DBSize(ctx)
	_, _ = vp.Exec(ctx)
	// Several goroutines at once, on several connections.
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 40 {
				c.DB(g%4).Incr(ctx, "par")
				if i%10 == 0 {
					_, _ = c.DB(g%4).Pipelined(ctx, func(p redis.Pipeliner) error {
						p.Get(ctx, "par")
						p.TTL(ctx, "par")
						return nil
					})
				}
			}
		})
	}
	wg.Wait()

	t1 := serverTotal(t, admin)
	adminCmds++ // the INFO of t0
	own := c.OwnCount()
	vown := viewer.OwnCount()
	if own.InFlight != 0 || own.Unsure != 0 || own.Scripts != 0 || vown.InFlight != 0 || vown.Unsure != 0 {
		t.Fatalf("own counters not settled: %+v, viewer %+v", own, vown)
	}
	if got, want := own.Done+vown.Done, t1-t0-adminCmds; got != want {
		t.Fatalf("Keydeck counted %d commands (%d + viewer %d), the server %d", got, own.Done, vown.Done, want)
	}
}

// A script whose inner calls nobody reports leaves a mark the overview
// turns into "≈".
func TestOwnCountFlagsUnreportedScripts(t *testing.T) {
	ctx := context.Background()
	s := redistest.Start(t)
	c := openConn(t, s.URL(0))
	if err := c.Client().Eval(ctx, `return redis.call('PING')`, nil).Err(); err != nil {
		t.Fatal(err)
	}
	if n := c.OwnCount().Scripts; n != 1 {
		t.Fatalf("unreported scripts = %d", n)
	}
}

// A command to a server that is down was never sent: it is neither
// counted nor in doubt.
func TestOwnCountIgnoresCommandsThatWereNeverSent(t *testing.T) {
	c := openConn(t, "redis://127.0.0.1:1/0")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_ = c.Client().Ping(ctx).Err()
	if own := c.OwnCount(); own != (OwnCount{}) {
		t.Fatalf("own = %+v", own)
	}
}

// The marked round trip waits for Keydeck's round trips in flight and
// holds new ones, so the mark says exactly what Keydeck had counted when
// the server ran it.
func TestOwnMarkIsExactWhileOthersRun(t *testing.T) {
	ctx := context.Background()
	s := redistest.Start(t)
	c := openConn(t, s.URL(0))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				_, _ = c.DB(g).Pipelined(ctx, func(p redis.Pipeliner) error {
					for range 100 {
						p.Incr(ctx, "busy")
					}
					return nil
				})
			}
		})
	}
	defer func() { close(stop); wg.Wait() }()
	quiet := 0
	var prevTotal, prevOwn int64
	for i := range 20 {
		var m OwnMark
		txt, err := c.Client().Info(WithOwnMark(ctx, &m), "stats").Result()
		if err != nil {
			t.Fatal(err)
		}
		if !m.Marked() {
			t.Fatal("the INFO did not fill the mark")
		}
		var total int64
		for _, line := range strings.Split(txt, "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "total_commands_processed:"); ok {
				total, _ = strconv.ParseInt(v, 10, 64)
			}
		}
		if !m.Quiet {
			prevTotal = 0
			continue
		}
		quiet++
		if prevTotal != 0 {
			// Nobody but Keydeck talks to this server.
			if dt, do := total-prevTotal, m.After.Done-prevOwn; dt != do {
				t.Fatalf("read %d: server ran %d commands, Keydeck counted %d", i, dt, do)
			}
		}
		prevTotal, prevOwn = total, m.After.Done
	}
	if quiet < 10 {
		t.Fatalf("only %d of 20 marked reads had the server to themselves", quiet)
	}
}
