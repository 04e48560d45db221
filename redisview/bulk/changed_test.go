package bulk_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/redisview/bulk"
)

// Keys changed or deleted between the count and the job are skipped and
// reported; a key created since is not touched.
func TestChangedSinceCountSkipped(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.fill("tmp:", 10, time.Time{})
	e := f.engine(bulk.Options{})
	j := f.counted(e, bulk.Spec{Kind: bulk.KindDelete, Sel: bulk.Selection{Pattern: "tmp:*"}})
	if j.Count != 10 {
		t.Fatalf("count: %+v", j)
	}
	f.db.Set(f.ctx, "tmp:1", "new value", 0)
	f.db.PExpire(f.ctx, "tmp:2", time.Hour) // a TTL is a change too
	f.db.Del(f.ctx, "tmp:3")
	f.db.Set(f.ctx, "tmp:new", "x", 0)
	if _, err := e.Start(f.ctx, admin, j.ID, 0); err != nil {
		t.Fatal(err)
	}
	j = f.finished(e, j.ID)
	if j.Status != bulk.Done || j.Acted != 7 || j.Changed != 2 || j.Gone != 1 {
		t.Fatalf("job: %+v", j)
	}
	for _, k := range []string{"tmp:1", "tmp:2", "tmp:new"} {
		if f.db.Exists(f.ctx, k).Val() != 1 {
			t.Errorf("%s was deleted", k)
		}
	}
	skips, total, err := e.Skips(f.ctx, j.ID, 100)
	if err != nil || total != 3 {
		t.Fatalf("skips: %v, %d, %v", skips, total, err)
	}
	got := map[string]string{}
	for _, s := range skips {
		got[s.Key] = s.Reason
	}
	if got["tmp:1"] != bulk.ReasonChanged || got["tmp:2"] != bulk.ReasonChanged || got["tmp:3"] != bulk.ReasonGone {
		t.Fatalf("reasons: %v", got)
	}
	// Undo restores the 7, and leaves what changed since alone: a key
	// created again is reported.
	f.db.Set(f.ctx, "tmp:4", "again", 0)
	u, err := e.Undo(f.ctx, admin, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Start(f.ctx, admin, u.ID, 0); err != nil {
		t.Fatal(err)
	}
	u = f.finished(e, u.ID)
	if u.Acted != 6 || u.Other != 1 || f.db.Get(f.ctx, "tmp:4").Val() != "again" || f.db.Get(f.ctx, "tmp:5").Val() != "vtmp:5" {
		t.Fatalf("undo: %+v", u)
	}
}

// Above the bound a job cannot be undone: it runs only with the count
// typed back, and Undo refuses it.
func TestTypedCountWhenNotUndoable(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.fill("tmp:", 12, time.Time{})
	e := f.engine(bulk.Options{UndoKeys: 10})
	j := f.counted(e, family("tmp"))
	if j.Undoable || !j.NeedsTypedCount() || j.UndoReason == "" {
		t.Fatalf("count: %+v", j)
	}
	for _, typed := range []int64{0, 11, 13} {
		if _, err := e.Start(f.ctx, admin, j.ID, typed); !errors.Is(err, action.ErrInvalid) {
			t.Fatalf("typed %d: %v", typed, err)
		}
	}
	if f.db.DBSize(f.ctx).Val() != 12 {
		t.Fatal("a refused confirmation deleted keys")
	}
	if _, err := e.Start(f.ctx, viewer, j.ID, 12); !errors.Is(err, action.ErrForbidden) {
		t.Fatalf("viewer: %v", err)
	}
	if _, err := e.Start(f.ctx, admin, j.ID, 12); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Start(f.ctx, admin, j.ID, 12); !errors.Is(err, bulk.ErrState) {
		t.Fatalf("second start: %v", err)
	}
	j = f.finished(e, j.ID)
	if j.Acted != 12 {
		t.Fatalf("job: %+v", j)
	}
	if _, err := e.Undo(f.ctx, admin, j.ID); !errors.Is(err, action.ErrNotUndoable) {
		t.Fatalf("undo: %v", err)
	}
}

// Expire and persist act on TTLs; undo puts the exact expiry back. Keys
// of Keydeck's own are never selected, and sensitive keys make a job
// that cannot be undone.
func TestExpirePersistAndProtected(t *testing.T) {
	t.Parallel()
	f := setup(t)
	base := time.Now().Add(time.Hour).Truncate(time.Millisecond)
	f.fill("tmp:", 5, base)
	f.db.Set(f.ctx, "keydeck:audit", "not a stream, but Keydeck's", 0)
	f.db.Set(f.ctx, "keydeck:session-key", "x", 0)
	e := f.engine(bulk.Options{})

	j := f.counted(e, bulk.Spec{Kind: bulk.KindPersist, Sel: bulk.Selection{Pattern: "*"}})
	if j.Count != 5 {
		t.Fatalf("selected Keydeck's keys: %+v", j)
	}
	if _, err := e.Start(f.ctx, admin, j.ID, 0); err != nil {
		t.Fatal(err)
	}
	if j = f.finished(e, j.ID); j.Acted != 5 || f.db.PTTL(f.ctx, "tmp:3").Val() != time.Duration(-1) {
		t.Fatalf("persist: %+v, ttl %v", j, f.db.PTTL(f.ctx, "tmp:3").Val())
	}
	u, err := e.Undo(f.ctx, admin, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Start(f.ctx, admin, u.ID, 0); err != nil {
		t.Fatal(err)
	}
	f.finished(e, u.ID)
	if got := f.db.PExpireTime(f.ctx, "tmp:3").Val(); got != time.Duration(base.Add(3*time.Millisecond).UnixMilli())*time.Millisecond {
		t.Fatalf("expiry after undo %v", got)
	}

	if _, err := e.Count(f.ctx, admin, f.conn, bulk.Spec{Kind: bulk.KindExpire, Sel: bulk.Selection{Family: "tmp"}}, nil); !errors.Is(err, action.ErrInvalid) {
		t.Fatalf("expire without a TTL: %v", err)
	}
	j = f.counted(e, bulk.Spec{Kind: bulk.KindExpire, TTL: time.Minute, Sel: bulk.Selection{Family: "tmp"}})
	if _, err := e.Start(f.ctx, admin, j.ID, 0); err != nil {
		t.Fatal(err)
	}
	f.finished(e, j.ID)
	if ttl := f.db.PTTL(f.ctx, "tmp:0").Val(); ttl <= 0 || ttl > time.Minute {
		t.Fatalf("ttl %v", ttl)
	}

	f.db.Set(f.ctx, "sec:1", "totp secret", 0)
	j = f.counted(e, family("secret"))
	if j.Count != 1 || j.Undoable || j.Sensitive != 1 {
		t.Fatalf("sensitive: %+v", j)
	}
	raw, _ := f.audit.Keys(f.ctx, "keydeck:bulk:*").Result()
	for _, k := range raw {
		if typ := f.audit.Type(f.ctx, k).Val(); typ == "list" {
			for _, v := range f.audit.LRange(f.ctx, k, 0, -1).Val() {
				if strings.Contains(v, "totp secret") {
					t.Fatalf("%s holds the sensitive value", k)
				}
			}
		}
	}
}
