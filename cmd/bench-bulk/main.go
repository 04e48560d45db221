// Command bench-bulk measures a bulk delete and its undo on a real
// redis-server: it loads -keys keys of one family (strings of 40–100
// bytes, each with a TTL of one to two hours) beside 100,000 keys the
// application reads, then counts the family, deletes every counted key
// and undoes the delete, while an application reads its keys at -get-rate
// GETs a second. For each phase it reports the time, Redis's CPU (INFO
// cpu, as a share of one core, against an idle baseline measured first),
// the application's GET latency (p50, p99, p99.9, max) and the slowest
// command (SLOWLOG). The audit Redis is database 15 of the same server,
// as in Keydeck's default setup, so its writes are counted too.
//
//	go run ./cmd/bench-bulk [-keys 1000000] [-rate 20000] [-batch 500] [-get-rate 2000]
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/redisview/bulk"
	"github.com/keydeck/keydeck/redisview/schema"
)

const pack = `name: benchbulk
families:
  - id: session
    db: 0
    pattern: "sess:{id}"
    type: string
    ttl: required
    domain: Sessions
    role: cache
  - id: app
    db: 0
    pattern: "app:{id}"
    type: string
    ttl: any
    domain: Application
    role: cache
`

var admin = action.Actor{User: "bench", Level: action.Admin}

type config struct {
	keys, rate, batch int
	getRate           float64
}

func main() {
	var c config
	flag.IntVar(&c.keys, "keys", 1_000_000, "keys of the family deleted and restored")
	flag.IntVar(&c.rate, "rate", 20000, "the bulk budget, keys per second (Keydeck's --bulk-rate)")
	flag.IntVar(&c.batch, "batch", 500, "keys per batch (Keydeck's --bulk-batch)")
	flag.Float64Var(&c.getRate, "get-rate", 2000, "the application's GETs per second during the run")
	flag.Parse()
	if err := bench(c); err != nil {
		fmt.Fprintln(os.Stderr, "bench-bulk:", err)
		os.Exit(1)
	}
}

func bench(c config) error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "bench-bulk-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	addr, stop, err := redistest.Launch(dir, "--slowlog-log-slower-than", "1000", "--slowlog-max-len", "100000")
	if err != nil {
		return err
	}
	defer stop()
	db := redis.NewClient(&redis.Options{Addr: addr})
	defer db.Close()
	t := time.Now()
	if err := load(ctx, db, c.keys); err != nil {
		return err
	}
	fmt.Printf("loaded %d session keys and 100,000 application keys in %s\n", c.keys, time.Since(t).Round(time.Millisecond))
	used, _ := db.Info(ctx, "memory").Result()
	fmt.Printf("redis used_memory: %s\n", field(used, "used_memory_human"))

	conn, err := redisview.Open(redisview.ConnConfig{Name: "bench", URL: "redis://" + addr + "/0"}, slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}
	defer conn.Close()
	p, err := schema.Load("benchbulk", []byte(pack))
	if err != nil {
		return err
	}
	conn.ForcePack(p)
	audit := redis.NewClient(&redis.Options{Addr: addr, DB: 15})
	defer audit.Close()
	runner := action.New(audit, action.Options{})
	eng := bulk.New(bulk.Options{Audit: audit, Runner: runner, Rate: c.rate, Batch: c.batch,
		UndoKeys: int64(c.keys), UndoBytes: 4 << 30,
		Conns: func(string) (*redisview.Conn, error) { return conn, nil }})
	defer eng.Close()

	m := meter{ctx: ctx, db: db, addr: addr, getRate: c.getRate}
	if err := m.idle(5 * time.Second); err != nil {
		return err
	}
	var j bulk.Job
	if err := m.phase("count", func() error {
		j, err = eng.Count(ctx, admin, conn, bulk.Spec{Kind: bulk.KindDelete, Sel: bulk.Selection{DB: 0, Family: "session"}}, nil)
		if err != nil {
			return err
		}
		j, err = waitJob(ctx, eng, j.ID, bulk.Counting)
		return err
	}); err != nil {
		return err
	}
	fmt.Printf("  counted %d keys, %d bytes of memory, %d bytes of DUMP; undoable: %v %s\n", j.Count, j.Memory, j.DumpBytes, j.Undoable, j.UndoReason)
	if err := m.phase("delete", func() error { return runJob(ctx, eng, j) }); err != nil {
		return err
	}
	n, _ := db.DBSize(ctx).Result()
	fmt.Printf("  database 0 holds %d keys after the delete\n", n)
	if err := m.phase("undo", func() error {
		u, err := eng.Undo(ctx, admin, j.ID)
		if err != nil {
			return err
		}
		return runJob(ctx, eng, u)
	}); err != nil {
		return err
	}
	return check(ctx, db, c.keys)
}

// load writes the family's keys and the application's, in pipelines.
func load(ctx context.Context, db *redis.Client, n int) error {
	base := time.Now().Add(time.Hour)
	for from := 0; from < n+100_000; from += 10_000 {
		p := db.Pipeline()
		for i := from; i < min(n+100_000, from+10_000); i++ {
			if i < n {
				k := "sess:" + strconv.Itoa(i)
				p.Set(ctx, k, fmt.Sprintf("%0*d", 40+i%61, i), 0)
				p.PExpireAt(ctx, k, base.Add(time.Duration(i%3_600_000)*time.Millisecond))
			} else {
				p.Set(ctx, "app:"+strconv.Itoa(i-n), "application value "+strconv.Itoa(i), 0)
			}
		}
		if _, err := p.Exec(ctx); err != nil {
			return err
		}
	}
	return nil
}

func runJob(ctx context.Context, eng *bulk.Engine, j bulk.Job) error {
	if _, err := eng.Start(ctx, admin, j.ID, j.Count); err != nil {
		return err
	}
	j, err := waitJob(ctx, eng, j.ID, bulk.Running, bulk.Counted)
	if err != nil {
		return err
	}
	if j.Status != bulk.Done {
		return fmt.Errorf("job %s ended %s: %s", j.ID, j.Status, j.Error)
	}
	fmt.Printf("  acted on %d keys, skipped %d (changed %d, gone %d, other %d)\n", j.Acted, j.Skipped(), j.Changed, j.Gone, j.Other)
	return nil
}

// waitJob polls the job while its status is one of while.
func waitJob(ctx context.Context, eng *bulk.Engine, id string, while ...bulk.Status) (bulk.Job, error) {
	for {
		j, err := eng.Job(ctx, id)
		if err != nil {
			return j, err
		}
		busy := false
		for _, s := range while {
			busy = busy || j.Status == s
		}
		if !busy {
			return j, nil
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// check says whether every session key came back with its expiry.
func check(ctx context.Context, db *redis.Client, n int) error {
	base := time.Now()
	bad := 0
	for from := 0; from < n; from += 10_000 {
		p := db.Pipeline()
		var cmds []*redis.DurationCmd
		for i := from; i < min(n, from+10_000); i++ {
			cmds = append(cmds, p.PTTL(ctx, "sess:"+strconv.Itoa(i)))
		}
		if _, err := p.Exec(ctx); err != nil {
			return err
		}
		for _, c := range cmds {
			if c.Val() <= 0 {
				bad++
			}
		}
	}
	fmt.Printf("after the undo: %d of %d session keys missing or without their TTL (checked %s)\n", bad, n, time.Since(base).Round(time.Millisecond))
	if bad > 0 {
		return fmt.Errorf("%d keys not restored", bad)
	}
	return nil
}
