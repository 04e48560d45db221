package action

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// seed writes one key of each type; ttl 0 leaves it persistent.
func seed(t *testing.T, c redis.Cmdable, typ, key string, ttl time.Duration) {
	t.Helper()
	ctx := t.Context()
	var err error
	switch typ {
	case "string":
		err = c.Set(ctx, key, "holder-3f2a\x00\xffbinary", 0).Err()
	case "hash":
		for i := range 12 {
			err = errors.Join(err, c.HSet(ctx, key, "f"+strconv.Itoa(i), i*i).Err())
		}
	case "hash-big": // hashtable encoding
		for i := range 200 {
			err = errors.Join(err, c.HSet(ctx, key, "field-"+strconv.Itoa(i), strings.Repeat("v", i)).Err())
		}
	case "set": // intset encoding
		err = c.SAdd(ctx, key, 7, 42, -3, 1e6).Err()
	case "set-big": // hashtable encoding
		for i := range 200 {
			err = errors.Join(err, c.SAdd(ctx, key, "member-"+strconv.Itoa(i)).Err())
		}
	case "zset":
		err = c.ZAdd(ctx, key, redis.Z{Score: 3.5, Member: "ann"}, redis.Z{Score: -1, Member: "bob"}, redis.Z{Score: 1e9, Member: "cy"}).Err()
	case "zset-big": // skiplist encoding
		for i := range 200 {
			err = errors.Join(err, c.ZAdd(ctx, key, redis.Z{Score: float64(i % 17), Member: "player-" + strconv.Itoa(i)}).Err())
		}
	case "list":
		err = c.RPush(ctx, key, "x", "y", "x", "z").Err()
	}
	if err == nil && ttl > 0 {
		err = c.PExpire(ctx, key, ttl).Err()
	}
	if err != nil {
		t.Fatal(err)
	}
}

func TestUndoRoundTripRestoresBytesAndTTL(t *testing.T) {
	f := setup(t, Options{})
	cases := []struct {
		action string
		args   []string
		ttl    time.Duration
	}{
		{"delete-key", nil, 0},
		{"delete-key", nil, 7 * time.Minute},
		{"set-ttl", []string{"ttl", "10m"}, 0},
		{"set-ttl", []string{"ttl", "90s"}, 7 * time.Minute},
		{"set-ttl", []string{"ttl", "persist"}, 7 * time.Minute},
	}
	for _, typ := range []string{"string", "hash", "hash-big", "set", "set-big", "zset", "zset-big", "list"} {
		for _, c := range cases {
			key := fmt.Sprintf("rt:%s:%s:%s:%s", typ, c.action, c.args, c.ttl)
			seed(t, f.db(3), typ, key, c.ttl)
			before := f.snap(3, key)
			if !checkDump([]byte(before.dump)) {
				t.Fatalf("%s: our CRC-64 disagrees with the server's DUMP", key)
			}
			out := f.mustRun(admin, c.action, f.req(3, key, c.args...))
			if after := f.snap(3, key); after == before {
				t.Fatalf("%s: %s changed nothing", key, c.action)
			}
			rec := f.last()
			if rec.ID != out.ID || rec.Outcome != OutcomeOK || !rec.Undoable() {
				t.Fatalf("%s: outcome record %+v, outcome %+v", key, rec, out)
			}
			f.mustRun(admin, "undo", UndoRequest(rec))
			got := f.snap(3, key)
			if got.dump != before.dump && !sameHashtable(t, f, 3, key, before.dump) {
				t.Errorf("%s %s: undo restored %q, want %q", typ, c.action, got.dump, before.dump)
			}
			if !bytes.Equal(contentDigest([]byte(got.dump)), contentDigest([]byte(before.dump))) {
				t.Errorf("%s %s: the restored value fingerprints differently", typ, c.action)
			}
			if (before.pttl < 0) != (got.pttl < 0) || (before.pttl-got.pttl).Abs() > 3*time.Second {
				t.Errorf("%s %s: TTL after undo %v, before %v", typ, c.action, got.pttl, before.pttl)
			}
		}
	}
}

// sameHashtable accepts a restored key whose DUMP differs from the original
// only in element order: Redis serializes a hashtable-encoded set, hash or
// zset in bucket order, and a dict rebuilt by RESTORE chains its entries
// differently, so no RESTORE-based undo can reproduce those bytes. The
// value must then be the same, element for element, in the same encoding.
func sameHashtable(t *testing.T, f *fixture, db int, key, origDump string) bool {
	t.Helper()
	c := f.db(db)
	enc := c.ObjectEncoding(f.ctx, key).Val()
	if enc != "hashtable" && enc != "skiplist" {
		return false
	}
	scratch := "scratch:" + key
	if err := c.Restore(f.ctx, scratch, 0, origDump).Err(); err != nil {
		t.Fatal(err)
	}
	defer c.Del(f.ctx, scratch)
	if c.ObjectEncoding(f.ctx, scratch).Val() != enc {
		return false
	}
	content := func(k string) string {
		switch c.Type(f.ctx, k).Val() {
		case "set":
			m := c.SMembers(f.ctx, k).Val()
			slices.Sort(m)
			return fmt.Sprint(m)
		case "hash":
			m := c.HGetAll(f.ctx, k).Val()
			return fmt.Sprint(m) // fmt sorts map keys
		case "zset":
			return fmt.Sprint(c.ZRangeWithScores(f.ctx, k, 0, -1).Val())
		}
		return "?" + k
	}
	if content(key) != content(scratch) {
		return false
	}
	t.Logf("%s: %s-encoded, same elements, DUMP in another order", key, enc)
	return true
}

func TestUndoOfUndoRedoes(t *testing.T) {
	f := setup(t, Options{})
	seed(t, f.db(0), "hash", "h", time.Hour)
	f.mustRun(admin, "delete-key", f.req(0, "h"))
	undo := f.mustRun(admin, "undo", UndoRequest(f.last()))
	if n := f.db(0).Exists(f.ctx, "h").Val(); n != 1 {
		t.Fatal("undo did not restore the key")
	}
	undoRec, err := f.r.Audit().Get(f.ctx, undo.ID)
	if err != nil {
		t.Fatal(err)
	}
	f.mustRun(admin, "undo", UndoRequest(undoRec))
	if n := f.db(0).Exists(f.ctx, "h").Val(); n != 0 {
		t.Fatal("undoing the undo did not delete the key again")
	}
}

func TestUndoRefuses(t *testing.T) {
	f := setup(t, Options{})
	seed(t, f.db(1), "string", "s", 0)
	f.mustRun(admin, "set-ttl", f.req(1, "s", "ttl", "1h"))
	done := f.last()

	// Someone else changed the key since: restoring would discard that.
	f.db(1).Expire(f.ctx, "s", 2*time.Hour)
	_, err := f.r.Preview(f.ctx, admin, f.conn, "undo", UndoRequest(done))
	wantErr(t, err, ErrNotUndoable, "changed since the action")

	// Put it back as the action left it: PEXPIRETIME equal again.
	f.db(1).ExpireAt(f.ctx, "s", time.Now().Add(time.Hour)) // not the same millisecond
	_, err = f.r.Preview(f.ctx, admin, f.conn, "undo", UndoRequest(done))
	wantErr(t, err, ErrNotUndoable, "changed since the action")

	// A fresh action, undone twice.
	seed(t, f.db(1), "list", "l", 0)
	f.mustRun(admin, "delete-key", f.req(1, "l"))
	del := f.last()
	pv, err := f.r.Preview(f.ctx, admin, f.conn, "undo", UndoRequest(del))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.r.Execute(f.ctx, admin, f.conn, pv); err != nil {
		t.Fatal(err)
	}
	_, err = f.r.Preview(f.ctx, admin, f.conn, "undo", UndoRequest(del))
	wantErr(t, err, ErrNotUndoable, "already undone")
	// Confirming a second, stale preview of the same undo is refused too.
	_, err = f.r.Execute(f.ctx, admin, f.conn, pv)
	wantErr(t, err, ErrNotUndoable, "already undone")
	recs, _, err := f.r.ReadAudit(f.ctx, Filter{Action: "delete-key", Key: "l"})
	if err != nil || len(recs) != 2 || recs[0].UndoneBy == "" || recs[0].Undoable() {
		t.Fatalf("ReadAudit does not show the undo: %+v %v", recs, err)
	}

	// Intent records and failures have nothing to undo.
	intent, _ := f.r.Audit().Get(f.ctx, del.Ref)
	_, err = f.r.Preview(f.ctx, admin, f.conn, "undo", UndoRequest(intent))
	wantErr(t, err, ErrNotUndoable, "intent record")
	_, err = f.r.Preview(f.ctx, admin, f.conn, "delete-key", f.req(1, "missing"))
	wantErr(t, err, ErrNotFound, "does not exist")

	// Unknown and malformed ids.
	_, err = f.r.Preview(f.ctx, admin, f.conn, "undo", f.req(1, "", "record", "1-1"))
	wantErr(t, err, ErrNotFound, "no audit record")
	_, err = f.r.Preview(f.ctx, admin, f.conn, "undo", f.req(1, "", "record", "x"))
	wantErr(t, err, ErrInvalid, "not an audit record id")
	// A record of another database.
	wrong := UndoRequest(del)
	wrong.DB = 2
	_, err = f.r.Preview(f.ctx, admin, f.conn, "undo", wrong)
	wantErr(t, err, ErrInvalid, "database 1")
}

// A forged or damaged prior never reaches RESTORE.
func TestUndoRefusesDamagedPrior(t *testing.T) {
	f := setup(t, Options{})
	seed(t, f.db(0), "set", "k", 0)
	f.mustRun(admin, "delete-key", f.req(0, "k"))
	done := f.last()
	intent, _ := f.r.Audit().Get(f.ctx, done.Ref)
	intent.Targets[0].Prior = intent.Targets[0].Prior[:8] + "AAAA" + intent.Targets[0].Prior[12:]
	a := f.r.Audit()
	iid, err := a.xadd(f.ctx, a.client, intent).Result()
	if err != nil {
		t.Fatal(err)
	}
	done.Ref = iid
	oid, _ := a.xadd(f.ctx, a.client, done).Result()
	done.ID = oid
	_, err = f.r.Preview(f.ctx, admin, f.conn, "undo", UndoRequest(done))
	wantErr(t, err, ErrNotUndoable, "damaged")
}
