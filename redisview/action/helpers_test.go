package action

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
)

var (
	admin   = Actor{User: "ada", Level: Admin}
	support = Actor{User: "sam", Level: Support}
	viewer  = Actor{User: "val", Level: Viewer}
)

// fixture is one target server with a connection on it, and a separate
// audit server, so the audit survives whatever a test does to the target.
type fixture struct {
	t      *testing.T
	ctx    context.Context
	target *redistest.Server
	audSrv *redistest.Server
	conn   *redisview.Conn
	audit  *redis.Client
	r      *Runner
}

func setup(t *testing.T, opts Options, targetArgs ...string) *fixture {
	t.Helper()
	t.Parallel()
	f := &fixture{t: t, ctx: context.Background()}
	f.target = redistest.Start(t, targetArgs...)
	f.audSrv = redistest.Start(t)
	f.conn = f.open(f.target.URL(0))
	f.audit = f.audSrv.Client(15)
	f.r = New(f.audit, opts)
	return f
}

func (f *fixture) open(url string) *redisview.Conn {
	f.t.Helper()
	c, err := redisview.Open(redisview.ConnConfig{Name: "main", URL: url}, slog.New(slog.DiscardHandler))
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { _ = c.Close() })
	return c
}

func (f *fixture) db(n int) *redis.Client { return f.target.Client(n) }

func (f *fixture) req(db int, key string, args ...string) Request {
	r := Request{Conn: f.conn.Name, DB: db, Key: key}
	if len(args) > 0 {
		r.Args = map[string]string{}
		for i := 0; i+1 < len(args); i += 2 {
			r.Args[args[i]] = args[i+1]
		}
	}
	return r
}

// run previews and executes as actor, failing the test if the preview fails.
func (f *fixture) run(actor Actor, kind string, req Request) (Outcome, error) {
	f.t.Helper()
	pv, err := f.r.Preview(f.ctx, actor, f.conn, kind, req)
	if err != nil {
		f.t.Fatalf("preview %s %+v: %v", kind, req, err)
	}
	return f.r.Execute(f.ctx, actor, f.conn, pv)
}

func (f *fixture) mustRun(actor Actor, kind string, req Request) Outcome {
	f.t.Helper()
	out, err := f.run(actor, kind, req)
	if err != nil {
		f.t.Fatalf("%s %+v: %v", kind, req, err)
	}
	if out.AuditWarning != "" {
		f.t.Fatalf("audit warning: %s", out.AuditWarning)
	}
	return out
}

type snap struct {
	dump string
	pttl time.Duration
}

func (f *fixture) snap(db int, key string) snap {
	f.t.Helper()
	d, err := f.db(db).Dump(f.ctx, key).Result()
	if err != nil && err != redis.Nil {
		f.t.Fatal(err)
	}
	pttl, err := f.db(db).PTTL(f.ctx, key).Result()
	if err != nil {
		f.t.Fatal(err)
	}
	return snap{d, pttl}
}

// raw is every audit stream entry, oldest first (tests may read it all).
func (f *fixture) raw() []redis.XMessage {
	f.t.Helper()
	msgs, err := f.audit.XRange(f.ctx, DefaultStream, "-", "+").Result()
	if err != nil {
		f.t.Fatal(err)
	}
	return msgs
}

func (f *fixture) records() []Record {
	var out []Record
	for _, m := range f.raw() {
		out = append(out, parseRecord(m))
	}
	return out
}

func (f *fixture) last() Record {
	f.t.Helper()
	recs := f.records()
	if len(recs) == 0 {
		f.t.Fatal("audit log is empty")
	}
	return recs[len(recs)-1]
}

func wantErr(t *testing.T, err, sentinel error, substr string) {
	t.Helper()
	if !errors.Is(err, sentinel) {
		t.Fatalf("error %v, want %v", err, sentinel)
	}
	if substr != "" && !strings.Contains(err.Error(), substr) {
		t.Fatalf("error %q does not say %q", err, substr)
	}
}
