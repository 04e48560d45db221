package action

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/schema"
)

// sentinelFixture is a fixture whose connection follows a primary through
// its sentinel (eIsland pack), with the audit log on a server of its own.
type sentinelFixture struct {
	*fixture
	s *redistest.Sentinel
}

func sentinelSetup(t *testing.T, opts Options) *sentinelFixture {
	t.Helper()
	t.Parallel()
	f := &fixture{t: t, ctx: context.Background()}
	s := redistest.StartSentinel(t)
	f.audSrv = redistest.Start(t)
	f.conn = f.open(s.URL(0))
	f.conn.ForcePack(schema.BuiltinPack("eisland"))
	f.audit = f.audSrv.Client(15)
	f.r = New(f.audit, opts)
	return &sentinelFixture{fixture: f, s: s}
}

// primary is a client of database db of the primary the sentinel names now.
func (f *sentinelFixture) primary(db int) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: f.s.PrimaryAddr(), DB: db})
	f.t.Cleanup(func() { _ = c.Close() })
	return c
}

// replicated waits until the replica's database db satisfies ok.
func (f *sentinelFixture) replicated(db int, what string, ok func(c *redis.Client) bool) {
	f.t.Helper()
	c := f.s.Replica.Client(db)
	redistest.Eventually(f.t, 10*time.Second, "the replica has "+what, func() bool { return ok(c) })
}

const (
	loginWindow = "auth:limit:login:failures:alice"
	loginLock   = "auth:limit:login:lock:alice"
)

// seedLogin writes alice's failures window and the lock it set on the
// primary, waits until the replica has them, and returns both keys'
// DUMP and TTL.
func (f *sentinelFixture) seedLogin() map[string]tsnap {
	f.t.Helper()
	c := f.primary(6)
	now := time.Now()
	var zs []redis.Z
	for i := range 5 {
		ms := now.Add(time.Duration(i-5) * time.Second).UnixMilli()
		zs = append(zs, redis.Z{Score: float64(ms), Member: fmt.Sprintf("%d:%d", ms, 1000+i)})
	}
	if err := c.ZAdd(f.ctx, loginWindow, zs...).Err(); err != nil {
		f.t.Fatal(err)
	}
	c.Expire(f.ctx, loginWindow, 15*time.Minute)
	c.Set(f.ctx, loginLock, strconv.FormatInt(now.Add(10*time.Minute).UnixMilli(), 10), 10*time.Minute)
	f.replicated(6, "the login keys", func(r *redis.Client) bool { return r.Exists(f.ctx, loginWindow, loginLock).Val() == 2 })
	return f.loginSnaps(c)
}

func (f *sentinelFixture) loginSnaps(c *redis.Client) map[string]tsnap {
	f.t.Helper()
	out := map[string]tsnap{}
	for _, k := range []string{loginWindow, loginLock} {
		out[k] = readSnap(f.t, c, k)
	}
	return out
}

// checkLogin fails unless both login keys on the primary now are as want
// (value, and the time they expire).
func (f *sentinelFixture) checkLogin(what string, want map[string]tsnap) {
	f.t.Log("checking the login keys " + what)
	f.t.Helper()
	got := f.loginSnaps(f.primary(6))
	for k, w := range want {
		sameSnap(f.t, k, got[k], w)
	}
}

func (f *sentinelFixture) loginGone(what string) {
	f.t.Helper()
	if n := f.primary(6).Exists(f.ctx, loginWindow, loginLock).Val(); n != 0 {
		f.t.Fatalf("%s: %d of the two login keys left", what, n)
	}
}

// outcomes are the audit's outcome records of kind, oldest first.
func (f *fixture) outcomes(kind string) []Record {
	var out []Record
	for _, r := range f.records() {
		if r.Phase == PhaseOutcome && r.Action == kind {
			out = append(out, r)
		}
	}
	return out
}

// The primary is killed between the preview and the confirmation: the
// confirmation acts on the promoted replica, whole, once — or, if it
// cannot reach it, changes nothing, says so, and can be confirmed again.
func TestSentinelFailoverBetweenPreviewAndExecute(t *testing.T) {
	f := sentinelSetup(t, Options{})
	before := f.seedLogin()
	pv, err := f.r.Preview(f.ctx, support, f.conn, KindResetLimit, f.req(6, loginWindow))
	if err != nil {
		t.Fatal(err)
	}
	f.s.KillPrimary(30 * time.Second)
	if _, err := f.r.Execute(f.ctx, support, f.conn, pv); err != nil {
		f.checkLogin("after a failed confirmation", before)
		if o := f.outcomes(KindResetLimit); len(o) != 1 || o[0].Outcome != OutcomeFailed || !strings.Contains(o[0].Error, "nothing was changed") {
			t.Fatalf("first confirmation failed (%v); audit %+v", err, o)
		}
		if _, err := f.r.Execute(f.ctx, support, f.conn, pv); err != nil {
			t.Fatalf("the confirmation again after the failover: %v", err)
		}
	}
	f.loginGone("after the confirmation")
	if o := f.outcomes(KindResetLimit); o[len(o)-1].Outcome != OutcomeOK {
		t.Fatalf("audit %+v", o)
	}
	f.mustRun(admin, KindUndo, UndoRequest(f.last()))
	f.checkLogin("after undo", before)
}

// The primary is killed during the confirmation, after the intent is
// recorded and before EXEC reaches it: nothing is changed, the audit's
// outcome says so, and the same confirmation works after the failover.
func TestSentinelFailoverBeforeExec(t *testing.T) {
	var kill atomic.Pointer[func()]
	f := sentinelSetup(t, Options{beforeExec: func() {
		if k := kill.Swap(nil); k != nil {
			(*k)()
		}
	}})
	before := f.seedLogin()
	pv, err := f.r.Preview(f.ctx, support, f.conn, KindResetLimit, f.req(6, loginWindow))
	if err != nil {
		t.Fatal(err)
	}
	k := func() { f.s.KillPrimary(30 * time.Second) }
	kill.Store(&k)
	_, err = f.r.Execute(f.ctx, support, f.conn, pv)
	wantErr(t, err, ErrRedis, "nothing was changed")
	f.checkLogin("after the failed confirmation", before)
	o := f.outcomes(KindResetLimit)
	if len(o) != 1 || o[0].Outcome != OutcomeFailed || !strings.Contains(o[0].Error, "nothing was changed") || o[0].Ref == "" {
		t.Fatalf("audit %+v", o)
	}

	out, err := f.r.Execute(f.ctx, support, f.conn, pv)
	if err != nil {
		t.Fatalf("the confirmation again after the failover: %v", err)
	}
	f.loginGone("after the second confirmation")
	if o := f.outcomes(KindResetLimit); len(o) != 2 || o[1].Outcome != OutcomeOK || o[1].ID != out.ID {
		t.Fatalf("audit %+v", o)
	}
	// A confirmation that ran is still refused a second time.
	_, err = f.r.Execute(f.ctx, support, f.conn, pv)
	wantErr(t, err, ErrInvalid, "already used")
	f.mustRun(admin, KindUndo, UndoRequest(f.outcomes(KindResetLimit)[1]))
	f.checkLogin("after undo", before)
}

// lostExec is a hook that, once armed, lets a transaction's EXEC through,
// waits until the replica has its writes (applied), kills the primary and
// hands the caller a lost connection instead of EXEC's reply: the change
// happened, and Keydeck cannot know it from the reply.
type lostExec struct {
	armed   atomic.Bool
	applied func() // waits for the replica, then kills the primary
}

func (h *lostExec) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *lostExec) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return next
}
func (h *lostExec) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		exec := slices.ContainsFunc(cmds, func(c redis.Cmder) bool { return c.Name() == "exec" })
		if !exec || !h.armed.CompareAndSwap(true, false) {
			return next(ctx, cmds)
		}
		// redis.Nil: a post-read of a key the change deleted.
		if err := next(ctx, cmds); err != nil && err != redis.Nil {
			return err
		}
		h.applied()
		return io.ErrUnexpectedEOF
	}
}

// EXEC applies, the primary dies before its reply arrives (after its
// replica has the change): Keydeck reads the promoted replica, finds the
// change applied, and records it as done, once; its undo restores both
// keys with their TTLs on the new primary.
func TestSentinelFailoverAfterExecReplyLost(t *testing.T) {
	f := sentinelSetup(t, Options{})
	h := &lostExec{}
	h.applied = func() {
		f.replicated(6, "the reset", func(r *redis.Client) bool { return r.Exists(f.ctx, loginWindow, loginLock).Val() == 0 })
		f.s.KillPrimary(30 * time.Second)
	}
	f.conn.AddHook(h)
	before := f.seedLogin()
	pv, err := f.r.Preview(f.ctx, support, f.conn, KindResetLimit, f.req(6, loginWindow))
	if err != nil {
		t.Fatal(err)
	}
	h.armed.Store(true)
	out, err := f.r.Execute(f.ctx, support, f.conn, pv)
	if err != nil {
		t.Fatalf("a change applied whose reply was lost: %v", err)
	}
	if h.armed.Load() {
		t.Fatal("the hook never saw EXEC")
	}
	f.loginGone("after the confirmation")
	o := f.outcomes(KindResetLimit)
	if len(o) != 1 || o[0].Outcome != OutcomeOK || o[0].ID != out.ID {
		t.Fatalf("audit %+v", o)
	}
	_, err = f.r.Execute(f.ctx, support, f.conn, pv)
	wantErr(t, err, ErrInvalid, "already used")
	f.mustRun(admin, KindUndo, UndoRequest(o[0]))
	f.checkLogin("after undo", before)
}

// An action recorded before a failover is undone on the promoted replica:
// both keys back, TTL included.
func TestSentinelUndoAfterFailover(t *testing.T) {
	f := sentinelSetup(t, Options{})
	before := f.seedLogin()
	f.mustRun(support, KindResetLimit, f.req(6, loginWindow))
	rec := f.last()
	f.replicated(6, "the reset", func(r *redis.Client) bool { return r.Exists(f.ctx, loginWindow, loginLock).Val() == 0 })
	f.s.KillPrimary(30 * time.Second)
	f.mustRun(admin, KindUndo, UndoRequest(rec))
	f.checkLogin("after undo on the new primary", before)
}

// A confirmation that failed because Redis could not be reached before
// anything was sent changed nothing, has not run, and is not lost: once
// Redis is back the same confirmation runs (once).
func TestConfirmationNotLostWhenRedisIsDown(t *testing.T) {
	f := setup(t, Options{}, "--appendonly", "yes", "--appendfsync", "always")
	seed(t, f.db(2), "zset", "z", time.Hour)
	pv, err := f.r.Preview(f.ctx, admin, f.conn, KindDeleteKey, f.req(2, "z"))
	if err != nil {
		t.Fatal(err)
	}
	f.target.Stop()
	_, err = f.r.Execute(f.ctx, admin, f.conn, pv)
	wantErr(t, err, ErrRedis, "Redis unreachable")
	f.target.Restart()
	if _, err := f.r.Execute(f.ctx, admin, f.conn, pv); err != nil {
		t.Fatalf("the confirmation once Redis is back: %v", err)
	}
	if f.db(2).Exists(f.ctx, "z").Val() != 0 {
		t.Fatal("not deleted")
	}
	_, err = f.r.Execute(f.ctx, admin, f.conn, pv)
	wantErr(t, err, ErrInvalid, "already used")
}

// A ban writes a set and a key (SADD, SETBIT): the primary killed before
// EXEC leaves neither written on the promoted replica, and the same
// confirmation then writes both; its undo takes the name out of the set
// (leaving its bits, as an undone ban does: see TestBanUnbanUndo).
func TestSentinelBanFailoverBeforeExec(t *testing.T) {
	var kill atomic.Pointer[func()]
	f := sentinelSetup(t, Options{beforeExec: func() {
		if k := kill.Swap(nil); k != nil {
			(*k)()
		}
	}})
	c := f.primary(9)
	c.SetBit(f.ctx, banBloom, banBits-1, 0)
	c.SAdd(f.ctx, banSet, "mallory")
	f.replicated(9, "the ban list", func(r *redis.Client) bool { return r.SIsMember(f.ctx, banSet, "mallory").Val() })
	state := func() (inSet bool, bits int) {
		c := f.primary(9)
		for _, off := range redisview.BloomPositions("eve", banBits, 6) {
			bits += int(c.GetBit(f.ctx, banBloom, off).Val())
		}
		return c.SIsMember(f.ctx, banSet, "eve").Val(), bits
	}
	pv, err := f.r.Preview(f.ctx, support, f.conn, KindBan, f.req(9, banSet, ArgName, "eve"))
	if err != nil {
		t.Fatal(err)
	}
	k := func() { f.s.KillPrimary(30 * time.Second) }
	kill.Store(&k)
	_, err = f.r.Execute(f.ctx, support, f.conn, pv)
	wantErr(t, err, ErrRedis, "nothing was changed")
	if in, bits := state(); in || bits != 0 {
		t.Fatalf("after the failed ban: in the set %v, %d of 6 bits set", in, bits)
	}
	out, err := f.r.Execute(f.ctx, support, f.conn, pv)
	if err != nil {
		t.Fatalf("the ban again after the failover: %v", err)
	}
	if in, bits := state(); !in || bits != 6 {
		t.Fatalf("after the ban: in the set %v, %d of 6 bits set", in, bits)
	}
	o := f.outcomes(KindBan)
	if len(o) != 2 || o[0].Outcome != OutcomeFailed || o[1].Outcome != OutcomeOK || o[1].ID != out.ID {
		t.Fatalf("audit %+v", o)
	}
	f.mustRun(admin, KindUndo, UndoRequest(o[1]))
	if in, _ := state(); in {
		t.Fatal("after undo: still in the set")
	}
}

// The primary is killed before EXEC reaches it and, during the failover,
// the application writes the key itself (a new lock, its own TTL): the key
// differs from the preview, but not as the change would leave it (a TTL of
// 1h), so whether the change was made is not known; it is not recorded as
// made (nor made undoable), and the application's write stays.
func TestSentinelLostExecAppWroteKey(t *testing.T) {
	var kill atomic.Pointer[func()]
	f := sentinelSetup(t, Options{beforeExec: func() {
		if k := kill.Swap(nil); k != nil {
			(*k)()
		}
	}})
	f.seedLogin()
	pv, err := f.r.Preview(f.ctx, admin, f.conn, KindSetTTL, f.req(6, loginLock, ArgTTL, "1h"))
	if err != nil {
		t.Fatal(err)
	}
	relock := strconv.FormatInt(time.Now().Add(20*time.Minute).UnixMilli(), 10)
	k := func() {
		f.s.KillPrimary(30 * time.Second)
		if err := f.primary(6).Set(f.ctx, loginLock, relock, 20*time.Minute).Err(); err != nil {
			t.Error(err)
		}
	}
	kill.Store(&k)
	_, err = f.r.Execute(f.ctx, admin, f.conn, pv)
	wantErr(t, err, ErrRedis, "not known")
	o := f.outcomes(KindSetTTL)
	if len(o) != 1 || o[0].Outcome != OutcomeFailed || o[0].Ref == "" {
		t.Fatalf("audit %+v", o)
	}
	c := f.primary(6)
	if v, ttl := c.Get(f.ctx, loginLock).Val(), c.PTTL(f.ctx, loginLock).Val(); v != relock || ttl > 20*time.Minute {
		t.Fatalf("the application's lock: %q, TTL %v", v, ttl)
	}
}
