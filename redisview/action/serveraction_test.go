package action

import (
	"errors"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview"
)

func (f *fixture) configGet(name string) string {
	f.t.Helper()
	m, err := f.db(0).ConfigGet(f.ctx, name).Result()
	if err != nil {
		f.t.Fatal(err)
	}
	return m[name]
}

func (f *fixture) configSet(name, v string) {
	f.t.Helper()
	if err := f.db(0).ConfigSet(f.ctx, name, v).Err(); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) serverReq(args ...string) Request { return f.req(0, "", args...) }

func TestConfigSetPreviewExecuteUndo(t *testing.T) {
	f := setup(t, Options{})
	f.configSet("slowlog-log-slower-than", "10000")
	req := f.serverReq(ArgParameter, "slowlog-log-slower-than", ArgValue, "0")
	pv, err := f.r.Preview(f.ctx, admin, f.conn, KindConfigSet, req)
	if err != nil {
		t.Fatal(err)
	}
	if pv.Summary != "slowlog-log-slower-than: 10000 → 0" || !pv.Undoable || pv.UndoNote != "" || pv.Server == nil || pv.Server.Target != "CONFIG slowlog-log-slower-than" {
		t.Fatalf("preview %+v", pv)
	}
	if got := f.configGet("slowlog-log-slower-than"); got != "10000" {
		t.Fatalf("preview wrote: %s", got)
	}
	// Through the token, as the confirmation page does.
	back, err := ParseToken(pv.Token())
	if err != nil {
		t.Fatal(err)
	}
	out, err := f.r.Execute(f.ctx, admin, f.conn, back)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.configGet("slowlog-log-slower-than"); got != "0" || !out.Undoable {
		t.Fatalf("after execute: %s, %+v", got, out)
	}
	recs := f.records()
	intent, done := recs[len(recs)-2], recs[len(recs)-1]
	if intent.Phase != PhaseIntent || intent.Server == nil || intent.Server.Prior != "10000" || intent.Server.Kind != KindConfigSet || len(intent.Keys) != 0 {
		t.Fatalf("intent %+v %+v", intent, intent.Server)
	}
	if done.Outcome != OutcomeOK || done.Ref != intent.ID || done.Server == nil || done.Server.After != "0" || !done.Undoable() || done.User != admin.User {
		t.Fatalf("outcome %+v %+v", done, done.Server)
	}
	if _, err := f.r.Execute(f.ctx, admin, f.conn, back); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "already used") {
		t.Fatalf("second confirmation: %v", err)
	}

	undo := UndoRequest(done)
	upv, err := f.r.Preview(f.ctx, admin, f.conn, KindUndo, undo)
	if err != nil {
		t.Fatal(err)
	}
	if upv.Summary != "slowlog-log-slower-than: 0 → 10000 (as before the action)" {
		t.Fatalf("undo preview %q", upv.Summary)
	}
	uout, err := f.r.Execute(f.ctx, admin, f.conn, upv)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.configGet("slowlog-log-slower-than"); got != "10000" {
		t.Fatalf("after undo: %s", got)
	}
	if last := f.last(); last.Undoes != done.ID || last.Outcome != OutcomeOK || last.ID != uout.ID {
		t.Fatalf("undo record %+v", last)
	}
	if _, err := f.r.Preview(f.ctx, admin, f.conn, KindUndo, undo); !errors.Is(err, ErrNotUndoable) {
		t.Fatalf("second undo: %v", err)
	}
}

func TestConfigSetRefusesAChangeSinceThePreview(t *testing.T) {
	f := setup(t, Options{})
	f.configSet("maxmemory-samples", "5")
	pv, err := f.r.Preview(f.ctx, admin, f.conn, KindConfigSet, f.serverReq(ArgParameter, "maxmemory-samples", ArgValue, "7"))
	if err != nil {
		t.Fatal(err)
	}
	f.configSet("maxmemory-samples", "6")
	_, err = f.r.Execute(f.ctx, admin, f.conn, pv)
	wantErr(t, err, ErrServerChanged, `maxmemory-samples is now "6"`)
	if !errors.Is(err, ErrChanged) || f.configGet("maxmemory-samples") != "6" {
		t.Fatalf("%v; value %s", err, f.configGet("maxmemory-samples"))
	}
	if last := f.last(); last.Outcome != OutcomeFailed || last.Ref != "" {
		t.Fatalf("record %+v", last)
	}

	// Undo refuses once someone changed the setting after the action.
	out := f.mustRun(admin, KindConfigSet, f.serverReq(ArgParameter, "maxmemory-samples", ArgValue, "9"))
	f.configSet("maxmemory-samples", "4")
	_, err = f.r.Preview(f.ctx, admin, f.conn, KindUndo, f.serverReq(ArgRecord, out.ID))
	wantErr(t, err, ErrNotUndoable, "maxmemory-samples is now 4, not 9")
}

func TestConfigSetRefusals(t *testing.T) {
	f := setup(t, Options{})
	for _, tc := range []struct {
		args     []string
		key      string
		sentinel error
		says     string
	}{
		{[]string{ArgParameter, "requirepass", ArgValue, "x"}, "", ErrForbidden, "neither reads nor changes"},
		{[]string{ArgParameter, "MasterAuth", ArgValue, "x"}, "", ErrForbidden, "password"},
		{[]string{ArgParameter, "masteruser", ArgValue, "x"}, "", ErrForbidden, ""},
		{[]string{ArgParameter, "aclfile", ArgValue, "/tmp/x"}, "", ErrForbidden, ""},
		{[]string{ArgParameter, "tls-key-file-pass", ArgValue, "x"}, "", ErrForbidden, ""},
		{[]string{ArgParameter, "maxmemory*", ArgValue, "1"}, "", ErrInvalid, "no pattern"},
		{[]string{ArgParameter, "no-such-setting", ArgValue, "1"}, "", ErrInvalid, "no configuration parameter"},
		{[]string{ArgParameter, "maxmemory"}, "", ErrInvalid, "value is required"},
		{[]string{ArgParameter, "maxmemory", ArgValue, "0", "extra", "1"}, "", ErrInvalid, "unknown argument"},
		{[]string{ArgParameter, "maxmemory", ArgValue, f.configGet("maxmemory")}, "", ErrInvalid, "nothing to change"},
		{[]string{ArgParameter, "maxmemory", ArgValue, "1"}, "some-key", ErrInvalid, "not on a key"},
		{[]string{ArgParameter, "maxmemory", ArgValue, "1", ArgNode, "10.0.0.1:7000"}, "", redisview.ErrUnknownNode, "not a cluster"},
	} {
		req := f.req(0, tc.key, tc.args...)
		_, err := f.r.Preview(f.ctx, admin, f.conn, KindConfigSet, req)
		wantErr(t, err, tc.sentinel, tc.says)
	}
	// An immutable setting: the server's own refusal, recorded.
	_, err := f.run(admin, KindConfigSet, f.serverReq(ArgParameter, "daemonize", ArgValue, "yes"))
	wantErr(t, err, ErrRedis, "immutable")
	if last := f.last(); last.Outcome != OutcomeFailed || !strings.Contains(last.Error, "immutable") || last.Ref == "" {
		t.Fatalf("record %+v", last)
	}
}

func TestServerActionsNeedAdminAndWritableConsole(t *testing.T) {
	f := setup(t, Options{})
	cfg := f.serverReq(ArgParameter, "maxmemory-samples", ArgValue, "8")
	kill := f.serverReq(ArgClientID, "1")
	for _, who := range []Actor{viewer, support} {
		for kind, req := range map[string]Request{KindConfigSet: cfg, KindKillClient: kill} {
			_, err := f.r.Preview(f.ctx, who, f.conn, kind, req)
			wantErr(t, err, ErrForbidden, "needs the admin role")
			if f.r.Allowed(who, kind) {
				t.Fatalf("%s allowed %s", who.Level, kind)
			}
		}
	}
	// A confirmation made by an admin is refused to a lesser role.
	pv, err := f.r.Preview(f.ctx, admin, f.conn, KindConfigSet, cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.r.Execute(f.ctx, support, f.conn, pv)
	wantErr(t, err, ErrForbidden, "")
	ro := New(f.audit, Options{ReadOnly: true})
	_, err = ro.Preview(f.ctx, admin, f.conn, KindConfigSet, cfg)
	wantErr(t, err, ErrForbidden, "read-only")
	_, err = ro.Execute(f.ctx, admin, f.conn, pv)
	wantErr(t, err, ErrForbidden, "read-only")
	if got := f.configGet("maxmemory-samples"); got != "5" {
		t.Fatalf("maxmemory-samples %s", got)
	}
}

// victim connects a named client and returns it and its id.
func (f *fixture) victim(name string) (*redis.Client, int64) {
	f.t.Helper()
	c := redis.NewClient(&redis.Options{Addr: f.target.Addr, ClientName: name, PoolSize: 1, MaxRetries: -1})
	f.t.Cleanup(func() { _ = c.Close() })
	id, err := c.ClientID(f.ctx).Result()
	if err != nil {
		f.t.Fatal(err)
	}
	return c, id
}

func TestKillClient(t *testing.T) {
	f := setup(t, Options{})
	_, id := f.victim("worker-7")
	req := f.serverReq(ArgClientID, itoa(id))
	pv, err := f.r.Preview(f.ctx, admin, f.conn, KindKillClient, req)
	if err != nil {
		t.Fatal(err)
	}
	if pv.Undoable || !strings.Contains(pv.UndoNote, "cannot be undone") || !strings.Contains(pv.Summary, `name "worker-7"`) || !strings.Contains(pv.Summary, "KILL client "+itoa(id)) {
		t.Fatalf("preview %+v", pv)
	}
	out, err := f.r.Execute(f.ctx, admin, f.conn, pv)
	if err != nil {
		t.Fatal(err)
	}
	f.waitGone(id)
	last := f.last()
	if last.ID != out.ID || last.Outcome != OutcomeOK || last.Action != KindKillClient || last.Server == nil || !last.Server.Absent || last.Undoable() {
		t.Fatalf("record %+v %+v", last, last.Server)
	}
	_, err = f.r.Preview(f.ctx, admin, f.conn, KindUndo, UndoRequest(last))
	wantErr(t, err, ErrNotUndoable, "cannot be undone")

	// A vanished id: at preview, and between preview and confirmation.
	_, err = f.r.Preview(f.ctx, admin, f.conn, KindKillClient, req)
	wantErr(t, err, ErrNotFound, "not connected")
	v2, id2 := f.victim("worker-8")
	pv, err = f.r.Preview(f.ctx, admin, f.conn, KindKillClient, f.serverReq(ArgClientID, itoa(id2)))
	if err != nil {
		t.Fatal(err)
	}
	_ = v2.Close()
	f.waitGone(id2)
	_, err = f.r.Execute(f.ctx, admin, f.conn, pv)
	wantErr(t, err, ErrServerChanged, "gone")

	// Keydeck's own connections are refused.
	if err := f.conn.Client().Ping(f.ctx).Err(); err != nil {
		t.Fatal(err)
	}
	own := f.ownClientID()
	_, err = f.r.Preview(f.ctx, admin, f.conn, KindKillClient, f.serverReq(ArgClientID, itoa(own)))
	wantErr(t, err, ErrForbidden, "Keydeck's own")
	_, err = f.r.Preview(f.ctx, admin, f.conn, KindKillClient, f.serverReq(ArgClientID, "x1"))
	wantErr(t, err, ErrInvalid, "not a client id")
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// waitGone waits until the server no longer lists client id.
func (f *fixture) waitGone(id int64) {
	f.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		txt, err := f.db(0).Do(f.ctx, "CLIENT", "LIST", "ID", itoa(id)).Text()
		if err == nil && strings.TrimSpace(txt) == "" {
			return
		}
		runtime.Gosched()
	}
	f.t.Fatalf("client %d still connected", id)
}

// ownClientID is the id of one of Keydeck's connections (named keydeck).
func (f *fixture) ownClientID() int64 {
	f.t.Helper()
	txt, err := f.db(0).ClientList(f.ctx).Result()
	if err != nil {
		f.t.Fatal(err)
	}
	for _, line := range strings.Split(txt, "\n") {
		if strings.Contains(line, " name=keydeck ") {
			id, _ := strconv.ParseInt(strings.TrimPrefix(strings.Fields(line)[0], "id="), 10, 64)
			return id
		}
	}
	f.t.Fatalf("no connection named keydeck in %s", txt)
	return 0
}

// A server that refuses the state read (ACL) refuses the action in its
// own words (403), not as an outage that gives the confirmation back
// (review L5).
func TestServerActionsRefusedByACL(t *testing.T) {
	f := setup(t, Options{})
	if err := f.db(0).Do(f.ctx, "acl", "setuser", "noadmin", "on", ">pw", "~*", "&*", "+@all", "-config|get", "-client|list").Err(); err != nil {
		t.Fatal(err)
	}
	_, id := f.victim("worker-9")
	f.conn = f.open("redis://noadmin:pw@" + f.target.Addr + "/0")
	_, err := f.r.Preview(f.ctx, admin, f.conn, KindConfigSet, f.serverReq(ArgParameter, "maxmemory", ArgValue, "1"))
	wantErr(t, err, ErrForbidden, "NOPERM")
	_, err = f.r.Preview(f.ctx, admin, f.conn, KindKillClient, f.serverReq(ArgClientID, itoa(id)))
	wantErr(t, err, ErrForbidden, "cannot be previewed")
	if errors.Is(err, ErrRedis) {
		t.Fatalf("an ACL refusal reads as an outage: %v", err)
	}
}
