package bulk_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/redisview/bulk"
)

// writeKind is what an import is to the engine: each item's payload
// written over its key (here a string value, with a TTL of a minute).
type writeKind struct{}

func (writeKind) Name() string  { return "test-write" }
func (writeKind) Title() string { return "Write" }
func (writeKind) Queue(ctx context.Context, tx redis.Pipeliner, _ bulk.Job, it bulk.Item, _ bulk.State, _ time.Time) string {
	tx.Set(ctx, it.Key, it.Payload, time.Minute)
	return ""
}

func init() { bulk.Register(writeKind{}) }

// A job of given items overwrites some keys and creates others; its undo
// restores the overwritten ones (value and expiry) and removes the new
// ones, leaving alone a new key written again since.
func TestPreparedItemsAndTheirUndo(t *testing.T) {
	t.Parallel()
	f := setup(t)
	exp := time.Now().Add(time.Hour).Truncate(time.Millisecond)
	f.db.Set(f.ctx, "old:1", "before 1", 0)
	f.db.Set(f.ctx, "old:2", "before 2", 0)
	f.db.PExpireAt(f.ctx, "old:2", exp)
	e := f.engine(bulk.Options{})
	items := []bulk.Item{{Key: "old:1", Payload: []byte("after 1")}, {Key: "old:2", Payload: []byte("after 2")},
		{Key: "new:1", Payload: []byte("n1")}, {Key: "new:2", Payload: []byte("n2")}, {Key: "new:\x00bin", Payload: []byte{0, 1}}}
	spec := bulk.Spec{Kind: "test-write", Sel: bulk.Selection{DB: 0, Label: "a file"}}
	if _, err := e.Prepare(f.ctx, admin, f.conn, spec, []bulk.Item{{Key: "keydeck:audit"}}); !errors.Is(err, action.ErrInvalid) {
		t.Fatalf("Keydeck's own key accepted: %v", err)
	}
	if _, err := e.Prepare(f.ctx, admin, f.conn, bulk.Spec{Kind: bulk.KindDelete, Sel: spec.Sel}, items); !errors.Is(err, action.ErrInvalid) {
		t.Fatalf("a scan kind prepared: %v", err)
	}
	j, err := e.Prepare(f.ctx, admin, f.conn, spec, items)
	if err != nil || j.Status != bulk.Counted || j.Count != 5 || !j.Undoable {
		t.Fatalf("prepare: %+v, %v", j, err)
	}
	// Created meanwhile: not what the preview saw, so skipped.
	f.db.Set(f.ctx, "new:2", "someone else's", 0)
	if _, err := e.Start(f.ctx, admin, j.ID, 0); err != nil {
		t.Fatal(err)
	}
	j = f.finished(e, j.ID)
	if j.Acted != 4 || j.Other != 1 || f.db.Get(f.ctx, "new:2").Val() != "someone else's" || f.db.Get(f.ctx, "old:2").Val() != "after 2" {
		t.Fatalf("job: %+v", j)
	}
	f.db.Set(f.ctx, "new:1", "written again", 0)
	u, err := e.Undo(f.ctx, admin, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Start(f.ctx, admin, u.ID, 0); err != nil {
		t.Fatal(err)
	}
	u = f.finished(e, u.ID)
	if u.Acted != 3 || u.Changed != 1 {
		t.Fatalf("undo: %+v", u)
	}
	if f.db.Get(f.ctx, "old:1").Val() != "before 1" || f.db.PTTL(f.ctx, "old:1").Val() != time.Duration(-1) ||
		f.db.Get(f.ctx, "old:2").Val() != "before 2" || f.db.PExpireTime(f.ctx, "old:2").Val() != time.Duration(exp.UnixMilli())*time.Millisecond {
		t.Fatal("overwritten keys not restored exactly")
	}
	if f.db.Exists(f.ctx, "new:\x00bin").Val() != 0 || f.db.Get(f.ctx, "new:1").Val() != "written again" {
		t.Fatal("new keys: the created one stays, or the one written again was removed")
	}
}
