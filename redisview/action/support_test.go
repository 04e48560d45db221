package action

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/demo"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview/schema"
)

// eisland is a fixture whose connection classifies keys with the eIsland pack.
func eisland(t *testing.T) *fixture {
	f := setup(t, Options{})
	f.conn.ForcePack(schema.BuiltinPack("eisland"))
	return f
}

// undoAndCheck undoes the last outcome as admin and checks every key is
// back, value and TTL.
func (f *fixture) undoAndCheck(db int, before map[string]snap) {
	f.t.Helper()
	f.mustRun(admin, "undo", UndoRequest(f.last()))
	for key, want := range before {
		got := f.snap(db, key)
		if got.dump != want.dump {
			f.t.Fatalf("undo restored %s as %q, want %q", key, got.dump, want.dump)
		}
		if (want.pttl < 0) != (got.pttl < 0) || (want.pttl-got.pttl).Abs() > 3*time.Second {
			f.t.Fatalf("undo restored %s with TTL %v, want about %v", key, got.pttl, want.pttl)
		}
	}
}

func mustContain(t *testing.T, what, s string, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(s, p) {
			t.Fatalf("%s %q does not say %q", what, s, p)
		}
	}
}

func TestResetLimitSliderTokenBucket(t *testing.T) {
	f := eisland(t)
	key := "verify:slider:rate:create:account:" + base64.RawURLEncoding.EncodeToString([]byte("alice@example.com"))
	slider := func() int64 {
		res, err := demo.SliderTokenBucket.Run(f.ctx, f.db(4), []string{key}, time.Now().UnixMilli(), 12, 12.0/60/1000, 1, 120).Int64Slice()
		if err != nil {
			t.Fatal(err)
		}
		return res[0]
	}
	for range 12 {
		if slider() != 1 {
			t.Fatal("a full bucket refused")
		}
	}
	if slider() != 0 {
		t.Fatal("an empty bucket allowed: the user is not slowed down")
	}
	before := map[string]snap{key: f.snap(4, key)}

	pv, err := f.r.Preview(f.ctx, support, f.conn, "reset-limit", f.req(4, key))
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "summary", pv.Summary, "RESET LIMIT", "try again immediately", quoteKey(key),
		"slider-rate-create-account", "token-bucket", "0 of 12 tokens left", "refused", "hash, 2 fields, TTL ") // 2m, or 1m 59s a millisecond later
	if !pv.Undoable || len(pv.Changes) != 1 || pv.Changes[0].Op != "delete" || pv.Title != "Reset limit" {
		t.Fatalf("preview %+v", pv)
	}
	if _, err := f.r.Execute(f.ctx, support, f.conn, pv); err != nil {
		t.Fatal(err)
	}
	if f.db(4).Exists(f.ctx, key).Val() != 0 {
		t.Fatal("the bucket is still there")
	}
	rec := f.last()
	if rec.Action != "reset-limit" || rec.User != support.User || rec.Level != "support" || rec.Outcome != OutcomeOK || !rec.Undoable() {
		t.Fatalf("audit %+v", rec)
	}
	_, err = f.r.Preview(f.ctx, support, f.conn, "reset-limit", f.req(4, key))
	wantErr(t, err, ErrNotFound, "can already try again")

	f.undoAndCheck(4, before)
	if slider() != 0 {
		t.Fatal("undo did not bring the empty bucket back")
	}
	f.mustRun(support, "reset-limit", f.req(4, key))
	if slider() != 1 {
		t.Fatal("after the reset the user still cannot try")
	}
}

// A login failures window and its lock are one limit: resetting either
// resets both.
func TestResetLimitLogin(t *testing.T) {
	f := eisland(t)
	const (
		window = "auth:limit:login:failures:alice"
		lock   = "auth:limit:login:lock:alice"
	)
	now := time.Now()
	lockUntil := now.Add(10 * time.Minute).UnixMilli()
	seedLogin := func() map[string]snap {
		t.Helper()
		var zs []redis.Z
		for i := range 5 {
			ms := now.Add(time.Duration(i-5) * time.Second).UnixMilli()
			zs = append(zs, redis.Z{Score: float64(ms), Member: fmt.Sprintf("%d:%d", ms, 1000+i)})
		}
		if err := f.db(6).ZAdd(f.ctx, window, zs...).Err(); err != nil {
			t.Fatal(err)
		}
		f.db(6).Expire(f.ctx, window, 15*time.Minute)
		f.db(6).Set(f.ctx, lock, strconv.FormatInt(lockUntil, 10), 10*time.Minute)
		return map[string]snap{window: f.snap(6, window), lock: f.snap(6, lock)}
	}

	// From the failures window.
	before := seedLogin()
	pv, err := f.r.Preview(f.ctx, support, f.conn, "reset-limit", f.req(6, window))
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "summary", pv.Summary, "try again immediately", "login-failures", "sliding-window", "5 recorded, limit 5 per 5m (reached)",
		"zset, 5 members, TTL 1", "and its lock: DELETE "+quoteKey(lock), "login-lock", "locked until", "TTL 9m")
	if len(pv.Changes) != 2 || pv.Changes[1].Op != "delete" {
		t.Fatalf("changes %+v", pv.Changes)
	}
	if _, err := f.r.Execute(f.ctx, support, f.conn, pv); err != nil {
		t.Fatal(err)
	}
	if n := f.db(6).Exists(f.ctx, window, lock).Val(); n != 0 {
		t.Fatalf("%d of the two login keys left", n)
	}
	if rec := f.last(); len(rec.Keys) != 2 || rec.Keys[0] != window {
		t.Fatalf("audit keys %v", rec.Keys)
	}
	f.undoAndCheck(6, before)

	// From the lock, with the window present.
	f.db(6).Del(f.ctx, window, lock)
	before = seedLogin()
	pv, err = f.r.Preview(f.ctx, support, f.conn, "reset-limit", f.req(6, lock))
	if err != nil {
		t.Fatal(err)
	}
	until := time.UnixMilli(lockUntil).UTC().Format("2006-01-02 15:04:05")
	mustContain(t, "summary", pv.Summary, "try again immediately", quoteKey(lock), "login-lock", "lock: locked until "+until+" UTC, in ",
		"string, 13 bytes, TTL 9m", "and the window that sets this lock: DELETE "+quoteKey(window))
	if _, err := f.r.Execute(f.ctx, support, f.conn, pv); err != nil {
		t.Fatal(err)
	}
	if n := f.db(6).Exists(f.ctx, window, lock).Val(); n != 0 {
		t.Fatalf("%d of the two login keys left", n)
	}
	f.undoAndCheck(6, before)

	// A lock alone: the window is watched though absent, and stays absent.
	f.db(6).Del(f.ctx, window)
	before = map[string]snap{lock: f.snap(6, lock), window: f.snap(6, window)}
	pv, err = f.r.Preview(f.ctx, support, f.conn, "reset-limit", f.req(6, lock))
	if err != nil {
		t.Fatal(err)
	}
	if len(pv.Changes) != 2 || pv.Changes[1].Op != "none" || !strings.Contains(pv.Changes[1].Text, "is not set") {
		t.Fatalf("changes %+v", pv.Changes)
	}
	// A failure recorded between preview and confirm is a change.
	f.db(6).ZAdd(f.ctx, window, redis.Z{Score: float64(now.UnixMilli()), Member: "late"})
	_, err = f.r.Execute(f.ctx, support, f.conn, pv)
	wantErr(t, err, ErrChanged, "")
	if f.db(6).Exists(f.ctx, lock).Val() != 1 {
		t.Fatal("the lock was deleted although the limit changed")
	}
	f.db(6).Del(f.ctx, window)
	f.mustRun(support, "reset-limit", f.req(6, lock))
	if f.db(6).Exists(f.ctx, lock).Val() != 0 {
		t.Fatal("lock left")
	}
	f.undoAndCheck(6, before)
}

func TestForceUnlock(t *testing.T) {
	f := eisland(t)
	const (
		payLock = "payment:order:op-lock:EI20250601123456789"
		mgLock  = "mg:score:lock:snake:10042"
		holder  = "5d0c8f5e-8a6b-4f43-9d3c-2f1f3c9b7e21"
	)
	f.db(10).Set(f.ctx, payLock, holder, 15*time.Second)
	f.db(14).Set(f.ctx, mgLock, "1", 10*time.Second)

	for _, c := range []struct {
		db         int
		key, value string
		says       []string
	}{
		{10, payLock, holder, []string{"order-op-lock", `held by "` + holder + `"`, "string, 36 bytes, TTL 1"}},
		{14, mgLock, "1", []string{"mg-score-lock", `value "1", which does not name its holder`, "TTL "}},
	} {
		before := map[string]snap{c.key: f.snap(c.db, c.key)}
		pv, err := f.r.Preview(f.ctx, support, f.conn, "force-unlock", f.req(c.db, c.key))
		if err != nil {
			t.Fatal(err)
		}
		mustContain(t, "summary", pv.Summary, append([]string{"RELEASE LOCK", quoteKey(c.key), "only if it still holds exactly this value"}, c.says...)...)
		if pv.Changes[0].Before.Excerpt != c.value || !pv.Undoable || pv.Title != "Force-release lock" {
			t.Fatalf("preview %+v", pv)
		}
		if _, err := f.r.Execute(f.ctx, support, f.conn, pv); err != nil {
			t.Fatal(err)
		}
		if f.db(c.db).Exists(f.ctx, c.key).Val() != 0 {
			t.Fatalf("%s still held", c.key)
		}
		_, err = f.r.Preview(f.ctx, support, f.conn, "force-unlock", f.req(c.db, c.key))
		wantErr(t, err, ErrNotFound, "not held")
		f.undoAndCheck(c.db, before)
		if got := f.db(c.db).Get(f.ctx, c.key).Val(); got != c.value {
			t.Fatalf("undo restored holder %q", got)
		}
	}
}

// A lock that expired (or was released) and was taken by someone else
// between preview and confirm belongs to the new holder: it is not released.
func TestForceUnlockRetakenLock(t *testing.T) {
	f := eisland(t)
	const payLock = "payment:order:op-lock:EI20250601000000001"
	const mgLock = "mg:score:lock:snake:7"
	retake := func(db int, key, value string, ttl time.Duration) func() {
		return func() {
			f.db(db).Del(f.ctx, key)
			if !f.db(db).SetNX(f.ctx, key, value, ttl).Val() {
				t.Error("could not re-take the lock")
			}
		}
	}
	for _, c := range []struct {
		name  string
		db    int
		key   string
		first string
		next  string
	}{
		{"payment, new holder", 10, payLock, "old-holder-uuid", "new-holder-uuid"},
		// The same value: only the expiry tells the new lock from the old.
		{"mini-game, same value", 14, mgLock, "1", "1"},
	} {
		for _, during := range []bool{false, true} {
			f.db(c.db).Set(f.ctx, c.key, c.first, 15*time.Second)
			pv, err := f.r.Preview(f.ctx, support, f.conn, "force-unlock", f.req(c.db, c.key))
			if err != nil {
				t.Fatal(err)
			}
			// The re-take expires at a later millisecond of the server's clock.
			at := f.db(c.db).Time(f.ctx).Val().UnixMilli()
			redistest.Eventually(t, 5*time.Second, "the server's next millisecond", func() bool { return f.db(c.db).Time(f.ctx).Val().UnixMilli() > at })
			if during {
				// After the runner's reads under WATCH, before EXEC.
				f.r.opts.beforeExec = retake(c.db, c.key, c.next, 14*time.Second)
			} else {
				retake(c.db, c.key, c.next, 14*time.Second)()
			}
			after := f.snap(c.db, c.key)
			_, err = f.r.Execute(f.ctx, support, f.conn, pv)
			f.r.opts.beforeExec = nil
			wantErr(t, err, ErrChanged, "")
			if got := f.db(c.db).Get(f.ctx, c.key).Val(); got != c.next {
				t.Fatalf("%s (during commit %v): the new holder's lock is %q", c.name, during, got)
			}
			if got := f.snap(c.db, c.key); !during && (got.dump != after.dump || got.pttl > after.pttl || got.pttl < after.pttl-time.Second) {
				t.Fatalf("%s: the new lock was touched: %+v, was %+v", c.name, got, after)
			}
			if rec := f.last(); rec.Outcome != OutcomeFailed || rec.Action != "force-unlock" {
				t.Fatalf("audit %+v", rec)
			}
		}
	}
}

func TestSupportActionsRefuse(t *testing.T) {
	f := eisland(t)
	const (
		board   = "mg:score:leaderboard:snake"
		payLock = "payment:order:op-lock:EI1"
		login   = "auth:limit:login:lock:bob"
	)
	f.db(14).ZAdd(f.ctx, board, redis.Z{Score: 99, Member: "10042"})
	f.db(10).Set(f.ctx, payLock, "uuid", time.Minute)
	f.db(6).Set(f.ctx, login, strconv.FormatInt(time.Now().Add(time.Minute).UnixMilli(), 10), time.Minute)
	f.db(0).Set(f.ctx, "no:such:family", "1", 0)
	f.db(4).HSet(f.ctx, "verify:slider:rate:create:account:Ym9i", "tokens", "x")

	for _, kind := range []string{"reset-limit", "force-unlock"} {
		for _, a := range []Actor{viewer, {Level: Support}} {
			_, err := f.r.Preview(f.ctx, a, f.conn, kind, f.req(14, board))
			wantErr(t, err, ErrForbidden, "")
		}
		if !f.r.Allowed(support, kind) || f.r.Allowed(viewer, kind) {
			t.Fatalf("%s: roles wrong", kind)
		}
		_, err := f.r.Preview(f.ctx, admin, f.conn, kind, f.req(14, board))
		wantErr(t, err, ErrInvalid, `"mg:score:leaderboard:snake" is family mg-leaderboard (role leaderboard)`)
		_, err = f.r.Preview(f.ctx, support, f.conn, kind, f.req(0, "no:such:family"))
		wantErr(t, err, ErrInvalid, "belongs to no family of pack eisland")
		_, err = f.r.Preview(f.ctx, support, f.conn, kind, f.req(14, board, "ttl", "1m"))
		wantErr(t, err, ErrInvalid, "unknown argument")
		_, err = f.r.Preview(f.ctx, support, f.conn, kind, f.req(14, ""))
		wantErr(t, err, ErrInvalid, "key is required")
	}
	_, err := f.r.Preview(f.ctx, support, f.conn, "reset-limit", f.req(10, payLock))
	wantErr(t, err, ErrInvalid, "family order-op-lock (role lock)")
	_, err = f.r.Preview(f.ctx, support, f.conn, "force-unlock", f.req(6, login))
	wantErr(t, err, ErrInvalid, "use Reset limit")
	_, err = f.r.Preview(f.ctx, support, f.conn, "force-unlock", f.req(10, "payment:order:op-lock:gone"))
	wantErr(t, err, ErrNotFound, "not held")

	// A key in a limit's namespace that is not the limit the pack describes.
	_, err = f.r.Preview(f.ctx, support, f.conn, "reset-limit", f.req(4, "verify:slider:rate:create:account:Ym9i"))
	if err != nil {
		t.Fatal(err) // a hash, as the pack says; the odd token value is only not shown
	}
	f.db(4).Del(f.ctx, "verify:slider:rate:create:account:Ym9i")
	f.db(4).Set(f.ctx, "verify:slider:rate:create:account:Ym9i", "3", 0)
	_, err = f.r.Preview(f.ctx, support, f.conn, "reset-limit", f.req(4, "verify:slider:rate:create:account:Ym9i"))
	wantErr(t, err, ErrInvalid, "is a string, but keys of family slider-rate-create-account (role token-bucket) are of type hash")

	// Refused executions are recorded, and nothing was touched.
	pv, err := f.r.Preview(f.ctx, support, f.conn, "force-unlock", f.req(10, payLock))
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.r.Execute(f.ctx, viewer, f.conn, pv)
	wantErr(t, err, ErrForbidden, "needs the support role")
	if rec := f.last(); rec.Outcome != OutcomeRefused || rec.User != viewer.User {
		t.Fatalf("audit %+v", rec)
	}
	if f.db(10).Exists(f.ctx, payLock).Val() != 1 || f.db(14).Exists(f.ctx, board).Val() != 1 {
		t.Fatal("a refused action touched a key")
	}

	// Without a pack nothing is a limit or a lock.
	bare := f.open(f.target.URL(0))
	_, err = f.r.Preview(f.ctx, support, bare, "force-unlock", f.req(10, payLock))
	wantErr(t, err, ErrInvalid, "has no schema pack")
}

func TestAppliesTo(t *testing.T) {
	p := schema.BuiltinPack("eisland")
	fam := func(id string) *schema.Family {
		f := p.Family(id)
		if f == nil {
			t.Fatalf("eisland has no family %s", id)
		}
		return f
	}
	reset, unlock, entry := ResetLimit{}, ForceUnlock{}, RemoveLeaderboardEntry{}
	for _, c := range []struct {
		f                    *schema.Family
		reset, unlock, entry bool
	}{
		{nil, false, false, false},
		{fam("slider-rate-create-account"), true, false, false}, // token-bucket
		{fam("login-failures"), true, false, false},             // sliding-window
		{fam("login-lock"), true, false, false},                 // lock holding an unlock time
		{fam("upload-avatar-ip"), true, false, false},           // counter-window
		{fam("order-op-lock"), false, true, false},
		{fam("mg-score-lock"), false, true, false},
		{fam("mg-leaderboard"), false, false, true},
		{fam("mg-user-meta"), false, false, false}, // leaderboard-meta: the entry is removed from its board
		{fam("mg-score-high"), false, false, false},
	} {
		id := "<nil>"
		if c.f != nil {
			id = c.f.ID
		}
		if reset.AppliesTo(c.f) != c.reset || unlock.AppliesTo(c.f) != c.unlock || entry.AppliesTo(c.f) != c.entry {
			t.Errorf("%s: reset-limit %v, force-unlock %v, remove-leaderboard-entry %v; want %v, %v, %v", id,
				reset.AppliesTo(c.f), unlock.AppliesTo(c.f), entry.AppliesTo(c.f), c.reset, c.unlock, c.entry)
		}
		if AppliesTo(Undo{}, c.f) || !AppliesTo(DeleteKey{}, c.f) || !AppliesTo(SetTTL{}, c.f) {
			t.Errorf("%s: undo applies, or delete-key/set-ttl do not", id)
		}
	}
	// Every family of a rate-limit role, in every built-in pack, may be reset.
	for _, pk := range schema.Builtin() {
		for _, f := range pk.Families {
			switch f.Role {
			case schema.RoleCounterWindow, schema.RoleTokenBucket, schema.RoleSlidingWindow, schema.RoleCounter, schema.RoleCooldown:
				if !reset.AppliesTo(f) || unlock.AppliesTo(f) {
					t.Errorf("%s/%s (%s)", pk.Name, f.ID, f.Role)
				}
			case schema.RoleLock:
				if reset.AppliesTo(f) == unlock.AppliesTo(f) {
					t.Errorf("%s/%s: a lock is either reset or released", pk.Name, f.ID)
				}
			}
		}
	}
	var names []string
	for _, k := range New(nil, Options{}).Kinds() {
		if _, ok := k.(Applicable); ok {
			names = append(names, k.Name())
		}
	}
	if got := strings.Join(names, " "); got != "ban clear-failures force-unlock remove-leaderboard-entry reset-limit set-bloom-bits unban unlock-login config-set create-key kill-client rebuild-bloom release-reservation remove-hash-field remove-set-member undo" {
		t.Fatalf("applicable kinds: %s", got)
	}
}

// A limit that is not reached does not refuse the user: the preview says
// so instead of promising they "can try again immediately".
func TestResetLimitSaysWhetherItWasReached(t *testing.T) {
	f := eisland(t)
	const key = "upload:limit:user-avatar:ip:10.0.0.7" // limit 3 per hour
	for n, want := range map[string]string{"2": "not reached now", "3": "try again immediately"} {
		f.db(7).Set(f.ctx, key, n, time.Hour)
		pv, err := f.r.Preview(f.ctx, support, f.conn, KindResetLimit, f.req(7, key))
		if err != nil {
			t.Fatal(err)
		}
		mustContain(t, "summary", pv.Summary, want, "count "+n+", limit 3 per 1h")
		if n == "2" && strings.Contains(pv.Summary, "immediately") {
			t.Fatalf("summary %q promises what is already true", pv.Summary)
		}
	}
}

// Writes to keys whose loss is serious carry the pack's warning.
func TestPreviewCarriesThePacksDanger(t *testing.T) {
	f := eisland(t)
	f.db(9).SAdd(f.ctx, "user:ban:set", "mallory")
	f.db(12).Set(f.ctx, "agent:balance:alice", "1234.5", 0)
	for _, c := range []struct {
		db   int
		key  string
		want string
	}{{9, "user:ban:set", "unbans everyone"}, {12, "agent:balance:alice", "reconciliation"}} {
		pv, err := f.r.Preview(f.ctx, admin, f.conn, KindDeleteKey, f.req(c.db, c.key))
		if err != nil {
			t.Fatal(err)
		}
		mustContain(t, "notes", strings.Join(pv.Notes, " "), "Careful", c.want)
	}
	f.db(9).Set(f.ctx, "user:ban:lookalike", "x", 0)
	if pv, err := f.r.Preview(f.ctx, admin, f.conn, KindDeleteKey, f.req(9, "user:ban:lookalike")); err != nil || len(pv.Notes) != 0 {
		t.Fatalf("notes on an ordinary key: %v %v", pv.Notes, err)
	}
}
