package action

import (
	"testing"
	"time"
)

// The target server dies between preview and confirmation, or between the
// intent record and EXEC. With AOF and fsync on every write, a restart
// shows exactly what Redis committed: nothing.
func TestRedisDownMidAction(t *testing.T) {
	f := setup(t, Options{}, "--appendonly", "yes", "--appendfsync", "always")
	seed(t, f.db(2), "zset", "z", time.Hour)
	seed(t, f.db(2), "set", "s", 0)
	before := f.snap(2, "z")

	pv, err := f.r.Preview(f.ctx, admin, f.conn, "delete-key", f.req(2, "z"))
	if err != nil {
		t.Fatal(err)
	}
	f.target.Stop()
	_, err = f.r.Execute(f.ctx, admin, f.conn, pv)
	wantErr(t, err, ErrRedis, "Redis unreachable")
	rec := f.last()
	if rec.Outcome != OutcomeFailed || rec.Error != err.Error() || rec.Keys[0] != "z" {
		t.Fatalf("audit: %+v", rec)
	}
	f.target.Restart()
	if got := f.snap(2, "z"); got.dump != before.dump || got.pttl <= 0 {
		t.Fatalf("after restart: %+v", got)
	}

	// Now it dies after the intent is recorded, with the transaction open.
	pv, err = f.r.Preview(f.ctx, admin, f.conn, "set-ttl", f.req(2, "s", "ttl", "5m"))
	if err != nil {
		t.Fatal(err)
	}
	beforeS := f.snap(2, "s")
	f.r.opts.beforeExec = f.target.Stop
	_, err = f.r.Execute(f.ctx, admin, f.conn, pv)
	wantErr(t, err, ErrRedis, "")
	recs := f.records()
	intent, out := recs[len(recs)-2], recs[len(recs)-1]
	if intent.Phase != PhaseIntent || out.Ref != intent.ID || out.Outcome != OutcomeFailed {
		t.Fatalf("audit:\n%+v\n%+v", intent, out)
	}
	f.r.opts.beforeExec = nil
	f.target.Restart()
	if got := f.snap(2, "s"); got != beforeS {
		t.Fatalf("half-done: %+v, was %+v", got, beforeS)
	}
	// And the connection recovers by itself.
	pv, err = f.r.Preview(f.ctx, admin, f.conn, "set-ttl", f.req(2, "s", "ttl", "5m"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.r.Execute(f.ctx, admin, f.conn, pv); err != nil {
		t.Fatal(err)
	}
}

func TestAuditUnavailableRefuses(t *testing.T) {
	f := setup(t, Options{})
	seed(t, f.db(0), "string", "k", time.Hour)
	before := f.snap(0, "k")
	pv, err := f.r.Preview(f.ctx, admin, f.conn, "delete-key", f.req(0, "k"))
	if err != nil {
		t.Fatal(err)
	}
	f.audSrv.Stop()
	_, err = f.r.Execute(f.ctx, admin, f.conn, pv)
	wantErr(t, err, ErrAuditUnavailable, "nothing was changed")
	if got := f.snap(0, "k"); got.dump != before.dump || got.pttl <= 0 {
		t.Fatalf("key touched: %+v", got)
	}
}
