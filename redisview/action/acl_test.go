package action

import (
	"fmt"
	"maps"
	"testing"
	"time"
)

func TestACLDeniedWrite(t *testing.T) {
	f := setup(t, Options{})
	seed(t, f.db(0), "hash", "h", time.Hour)
	seed(t, f.db(0), "string", "s", 0)
	admin0 := f.db(0)
	for _, acl := range [][]any{
		{"acl", "setuser", "nodel", "on", ">pw", "~*", "&*", "+@all", "-del", "-unlink"},
		{"acl", "setuser", "nodump", "on", ">pw", "~*", "&*", "+@all", "-dump"},
		{"acl", "setuser", "norestore", "on", ">pw", "~*", "&*", "+@all", "-restore"},
	} {
		if err := admin0.Do(f.ctx, acl...).Err(); err != nil {
			t.Fatal(err)
		}
	}
	as := func(user string) {
		f.conn = f.open(fmt.Sprintf("redis://%s:pw@%s/0", user, f.target.Addr))
	}

	as("nodel")
	before := f.snap(0, "h")
	_, err := f.run(admin, "delete-key", f.req(0, "h"))
	wantErr(t, err, ErrRedis, "not permitted by Redis ACL")
	if got := f.snap(0, "h"); got.dump != before.dump {
		t.Fatal("key changed")
	}
	recs := f.records()
	intent, out := recs[len(recs)-2], recs[len(recs)-1]
	if intent.Phase != PhaseIntent || out.Ref != intent.ID || out.Outcome != OutcomeFailed || out.Error != err.Error() {
		t.Fatalf("audit:\n%+v\n%+v", intent, out)
	}
	t.Log(err)
	// What the ACL allows still works.
	f.mustRun(admin, "set-ttl", f.req(0, "s", "ttl", "1h"))

	// Without DUMP, or without RESTORE to write a DUMP back, the prior is
	// recorded element-wise and undo writes it back with HSET: exact bytes
	// and TTL.
	fields := admin0.HGetAll(f.ctx, "h").Val()
	for _, user := range []string{"nodump", "norestore"} {
		as(user)
		f.mustRun(admin, "delete-key", f.req(0, "h"))
		if intent := f.records()[len(f.records())-2]; intent.Targets[0].Snapshot == nil || intent.Targets[0].Prior != "" {
			t.Fatalf("%s: prior not a snapshot: %+v", user, intent.Targets[0])
		}
		f.mustRun(admin, "undo", UndoRequest(f.last()))
		as("default")
		// Field for field (a rebuilt hash may list its fields in another
		// order, so its DUMP differs).
		got, pttl := admin0.HGetAll(f.ctx, "h").Val(), admin0.PTTL(f.ctx, "h").Val()
		if !maps.Equal(got, fields) || pttl > before.pttl || pttl < before.pttl-time.Minute {
			t.Fatalf("%s: undo restored %v %v, want %v %v", user, got, pttl, fields, before.pttl)
		}
	}

	// A prior recorded by DUMP needs RESTORE to come back.
	as("default")
	f.conn = f.open(f.target.URL(0))
	f.mustRun(admin, "delete-key", f.req(0, "h"))
	as("norestore")
	_, err = f.run(admin, "undo", UndoRequest(f.last()))
	wantErr(t, err, ErrRedis, "not permitted by Redis ACL")
	if admin0.Exists(f.ctx, "h").Val() != 0 {
		t.Fatal("half-done undo")
	}
	if rec := f.last(); rec.Outcome != OutcomeFailed || rec.Undoes == "" {
		t.Fatalf("audit: %+v", rec)
	}
	// The failed undo released its claim: an admin with RESTORE may retry.
	as("default")
	f.conn = f.open(f.target.URL(0))
	recs, _, err = f.r.ReadAudit(f.ctx, Filter{Action: "delete-key", Key: "h"})
	if err != nil {
		t.Fatal(err)
	}
	var del Record
	for _, r := range recs {
		if r.Phase == PhaseOutcome && r.Outcome == OutcomeOK {
			del = r
			break
		}
	}
	f.mustRun(admin, "undo", UndoRequest(del))
	if got := admin0.HGetAll(f.ctx, "h").Val(); !maps.Equal(got, fields) {
		t.Fatal("retried undo did not restore the key")
	}
}

// A key the ACL hides, or a connection whose password is wrong, is not a
// missing key: the preview fails and says why.
func TestPreviewReportsReadRefusals(t *testing.T) {
	f := setup(t, Options{})
	admin0 := f.db(0)
	if err := admin0.Do(f.ctx, "acl", "setuser", "narrow", "on", ">pw", "~acl:*", "+@all").Err(); err != nil {
		t.Fatal(err)
	}
	admin0.Set(f.ctx, "outside", "v", 0)
	for _, c := range []struct{ user, key, want string }{
		{"narrow:pw", "definitely-not-there", "not permitted by Redis ACL"},
		{"narrow:pw", "outside", "not permitted by Redis ACL"},
		{"narrow:wrong", "acl:x", "authentication failed"},
	} {
		f.conn = f.open(fmt.Sprintf("redis://%s@%s/0", c.user, f.target.Addr))
		_, err := f.r.Preview(f.ctx, admin, f.conn, "delete-key", f.req(0, c.key))
		wantErr(t, err, ErrRedis, c.want)
	}
}
