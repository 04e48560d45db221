package action

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// deletePair stands in for the multi-key actions to come (a leaderboard
// entry with its companion hash): two keys, one transaction, one record.
type deletePair struct{}

func (deletePair) Name() string    { return "delete-pair" }
func (deletePair) Title() string   { return "Delete pair" }
func (deletePair) Requires() Level { return Support }
func (deletePair) Args() []Arg     { return []Arg{{Name: "other"}} }
func (deletePair) Plan(_ context.Context, _ Env, req Request) (Plan, error) {
	if err := checkArgs(req, "other"); err != nil {
		return nil, err
	}
	return deletePlan{keys: []string{req.Key, req.Args["other"]}}, nil
}

func TestMultiKeyActionIsAtomicAndUndoable(t *testing.T) {
	f := setup(t, Options{Kinds: []Kind{deletePair{}}})
	seed(t, f.db(6), "zset", "board", 0)
	seed(t, f.db(6), "hash", "board:meta", time.Hour)
	board, meta := f.snap(6, "board"), f.snap(6, "board:meta")
	req := f.req(6, "board", "other", "board:meta")

	// The second key changes while committing: neither is deleted.
	f.r.opts.beforeExec = func() { f.db(6).HSet(f.ctx, "board:meta", "late", 1) }
	_, err := f.run(support, "delete-pair", req)
	wantErr(t, err, ErrChanged, "")
	if f.db(6).Exists(f.ctx, "board", "board:meta").Val() != 2 {
		t.Fatal("half-done")
	}
	f.r.opts.beforeExec = nil
	f.db(6).HDel(f.ctx, "board:meta", "late")
	meta = f.snap(6, "board:meta")

	out := f.mustRun(support, "delete-pair", req)
	if len(out.Changes) != 2 || f.db(6).Exists(f.ctx, "board", "board:meta").Val() != 0 {
		t.Fatalf("outcome %+v", out)
	}
	rec := f.last()
	if fmt.Sprint(rec.Keys) != "[board board:meta]" || len(rec.Targets) != 2 {
		t.Fatalf("record %+v", rec)
	}
	// Support may delete the pair; only an admin may undo.
	_, err = f.r.Preview(f.ctx, support, f.conn, "undo", UndoRequest(rec))
	wantErr(t, err, ErrForbidden, "admin")
	f.mustRun(admin, "undo", UndoRequest(rec))
	if got := f.snap(6, "board"); got.dump != board.dump {
		t.Fatal("board not restored")
	}
	if got := f.snap(6, "board:meta"); got.dump != meta.dump || (got.pttl-meta.pttl).Abs() > 3*time.Second {
		t.Fatal("meta not restored")
	}
}

func TestUndoOfMultiKeyRefusesWhenOneKeyChanged(t *testing.T) {
	f := setup(t, Options{Kinds: []Kind{deletePair{}}})
	seed(t, f.db(0), "set", "a", 0)
	seed(t, f.db(0), "list", "b", 0)
	f.mustRun(admin, "delete-pair", f.req(0, "a", "other", "b"))
	rec := f.last()
	f.db(0).Set(f.ctx, "b", "recreated by the app", 0)
	_, err := f.r.Preview(f.ctx, admin, f.conn, "undo", UndoRequest(rec))
	wantErr(t, err, ErrNotUndoable, `"b" changed since the action`)
	if f.db(0).Exists(f.ctx, "a").Val() != 0 || f.db(0).Get(f.ctx, "b").Val() != "recreated by the app" {
		t.Fatal("touched")
	}
	if err := f.db(0).Get(f.ctx, "a").Err(); err != redis.Nil {
		t.Fatal(err)
	}
}
