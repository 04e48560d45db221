package bulk_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/redisview/bulk"
	"github.com/keydeck/keydeck/redisview/schema"
)

const testPack = `
name: bulktest
families:
  - id: tmp
    db: 0
    pattern: "tmp:{id}"
    type: string
    ttl: any
    domain: Temp
    role: cache
  - id: secret
    db: 0
    pattern: "sec:{id}"
    type: string
    ttl: any
    domain: Temp
    role: cache
    sensitive: true
`

var (
	admin  = action.Actor{User: "ada", Level: action.Admin}
	viewer = action.Actor{User: "val", Level: action.Viewer}
)

// fixture is a target server with a connection on it and an audit server.
type fixture struct {
	t      *testing.T
	ctx    context.Context
	target *redistest.Server
	conn   *redisview.Conn
	audit  *redis.Client
	runner *action.Runner
	db     *redis.Client
}

func setup(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{t: t, ctx: context.Background()}
	f.target = redistest.Start(t)
	aud := redistest.Start(t)
	conn, err := redisview.Open(redisview.ConnConfig{Name: "main", URL: f.target.URL(0)}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	p, err := schema.Load("bulktest", []byte(strings.TrimLeft(testPack, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	conn.ForcePack(p)
	f.conn = conn
	f.audit = aud.Client(15)
	f.runner = action.New(f.audit, action.Options{})
	f.db = f.target.Client(0)
	return f
}

// engine is a new engine on the fixture's audit Redis (a Keydeck process).
func (f *fixture) engine(o bulk.Options) *bulk.Engine {
	o.Audit, o.Runner = f.audit, f.runner
	o.Conns = func(string) (*redisview.Conn, error) { return f.conn, nil }
	e := bulk.New(o)
	f.t.Cleanup(e.Close)
	return e
}

// fill writes n string keys prefix0…, each expiring at base+i ms when
// base is not zero.
func (f *fixture) fill(prefix string, n int, base time.Time) {
	f.t.Helper()
	for from := 0; from < n; from += 5000 {
		p := f.db.Pipeline()
		for i := from; i < min(n, from+5000); i++ {
			k := fmt.Sprintf("%s%d", prefix, i)
			p.Set(f.ctx, k, "v"+k, 0)
			if !base.IsZero() {
				p.PExpireAt(f.ctx, k, base.Add(time.Duration(i)*time.Millisecond))
			}
		}
		if _, err := p.Exec(f.ctx); err != nil {
			f.t.Fatal(err)
		}
	}
}

// wait polls the job until cond holds.
func (f *fixture) wait(e *bulk.Engine, id, what string, d time.Duration, cond func(bulk.Job) bool) bulk.Job {
	f.t.Helper()
	var j bulk.Job
	redistest.Eventually(f.t, d, what, func() bool {
		var err error
		j, err = e.Job(f.ctx, id)
		if err != nil {
			f.t.Fatal(err)
		}
		return cond(j)
	})
	return j
}

func (f *fixture) counted(e *bulk.Engine, spec bulk.Spec) bulk.Job {
	f.t.Helper()
	j, err := e.Count(f.ctx, admin, f.conn, spec, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	return f.wait(e, j.ID, "the count", 30*time.Second, func(j bulk.Job) bool { return j.Status != bulk.Counting })
}

func (f *fixture) finished(e *bulk.Engine, id string) bulk.Job {
	f.t.Helper()
	return f.wait(e, id, "the job", 60*time.Second, func(j bulk.Job) bool {
		return j.Status == bulk.Done || j.Status == bulk.Failed || j.Status == bulk.Cancelled
	})
}

func family(id string) bulk.Spec {
	return bulk.Spec{Kind: bulk.KindDelete, Sel: bulk.Selection{DB: 0, Family: id}}
}
