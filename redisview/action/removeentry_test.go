package action

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview/schema"
)

const (
	lbDB    = 14
	lbBoard = "mg:score:leaderboard:snake"
	lbKind  = "remove-leaderboard-entry"
)

func metaKey(member string) string { return "mg:score:user-meta:snake:" + member }
func highKey(member string) string { return "mg:score:high:snake:" + member }

// seedEntry writes one leaderboard row as eIsland does: the member with its
// score, its metadata hash and its cached high score, both with a TTL.
func (f *fixture) seedEntry(member string, score float64) {
	f.t.Helper()
	c := f.db(lbDB)
	err := c.ZAdd(f.ctx, lbBoard, redis.Z{Score: score, Member: member}).Err()
	if err == nil {
		err = c.HSet(f.ctx, metaKey(member), "score", formatScore(score), "durationMs", 93125, "moves", 412, "achievedAt", 1748736000123).Err()
	}
	if err == nil {
		err = c.Expire(f.ctx, metaKey(member), time.Hour).Err()
	}
	if err == nil {
		err = c.Set(f.ctx, highKey(member), formatScore(score), 50*time.Minute).Err()
	}
	if err != nil {
		f.t.Fatal(err)
	}
}

// seedBoard fills the board with n other players, players "p0".."p{n-1}".
func (f *fixture) seedBoard(n int) {
	f.t.Helper()
	var zs []redis.Z
	for i := range n {
		zs = append(zs, redis.Z{Score: float64(i * 10), Member: "p" + strconv.Itoa(i)})
	}
	if err := f.db(lbDB).ZAdd(f.ctx, lbBoard, zs...).Err(); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) entryReq(member string) Request {
	return f.req(lbDB, lbBoard, "member", member)
}

// boardWithout is the board's content except member, for "others untouched".
func (f *fixture) boardWithout(member string) string {
	f.t.Helper()
	zs, err := f.db(lbDB).ZRangeWithScores(f.ctx, lbBoard, 0, -1).Result()
	if err != nil {
		f.t.Fatal(err)
	}
	zs = slices.DeleteFunc(zs, func(z redis.Z) bool { return z.Member == member })
	return fmt.Sprint(zs)
}

// noBoardDump fails if any audit entry holds the board's serialized value
// in any encoding, or a prior for the board's target.
func (f *fixture) noBoardDump(boardDump string) {
	f.t.Helper()
	forms := []string{base64.StdEncoding.EncodeToString([]byte(boardDump)), hex.EncodeToString([]byte(boardDump))}
	for _, m := range f.raw() {
		for field, v := range m.Values {
			for _, form := range forms {
				if strings.Contains(fmt.Sprint(v), form[:min(len(form), 64)]) {
					f.t.Fatalf("audit entry %s field %s holds a DUMP of the whole board", m.ID, field)
				}
			}
		}
	}
	for _, r := range f.records() {
		for _, tg := range r.Targets {
			if tg.Key == lbBoard && tg.Prior != "" {
				f.t.Fatalf("record %s records a prior for the board: %.40q…", r.ID, tg.Prior)
			}
		}
	}
}

func TestRemoveLeaderboardEntry(t *testing.T) {
	f := eisland(t)
	const cheater = "10042"
	f.seedBoard(250)
	f.seedEntry(cheater, 99999)
	f.seedEntry("p7", 70) // another row's companions, left alone
	others := f.boardWithout(cheater)
	boardDump := f.snap(lbDB, lbBoard).dump
	before := map[string]snap{metaKey(cheater): f.snap(lbDB, metaKey(cheater)), highKey(cheater): f.snap(lbDB, highKey(cheater))}
	metaFields := f.db(lbDB).HGetAll(f.ctx, metaKey(cheater)).Val()
	p7 := map[string]snap{metaKey("p7"): f.snap(lbDB, metaKey("p7")), highKey("p7"): f.snap(lbDB, highKey("p7"))}

	pv, err := f.r.Preview(f.ctx, support, f.conn, lbKind, f.entryReq(cheater))
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "summary", pv.Summary,
		`REMOVE ENTRY "10042" from leaderboard "mg:score:leaderboard:snake" (family mg-leaderboard: rank #1 of 251, score 99999)`,
		"only if its score is still 99999",
		`and its metadata: DELETE "mg:score:user-meta:snake:10042" (family mg-user-meta, leaderboard-meta; hash, 4 fields, TTL 59m`,
		`and its high score: DELETE "mg:score:high:snake:10042" (family mg-score-high, cache; value "99999"; string, 5 bytes, TTL 4`)
	if pv.Title != "Remove leaderboard entry" || !pv.Undoable || len(pv.Changes) != 3 ||
		pv.Changes[0].Op != "remove-member" || pv.Changes[1].Op != "delete" || pv.Changes[2].Op != "delete" {
		t.Fatalf("preview %+v", pv)
	}
	if m := pv.Changes[0].Before.Member; m == nil || m.Name != cheater || m.Score != "99999" || m.Rank != 0 || pv.Changes[0].Before.Size != 251 {
		t.Fatalf("member state %+v", m)
	}
	if !slices.Contains(pv.Notes, ColdStartNote) || !strings.Contains(ColdStartNote, "cold start") {
		t.Fatalf("notes %q", pv.Notes)
	}

	out, err := f.r.Execute(f.ctx, support, f.conn, pv)
	if err != nil {
		t.Fatal(err)
	}
	c := f.db(lbDB)
	if err := c.ZScore(f.ctx, lbBoard, cheater).Err(); err != redis.Nil {
		t.Fatalf("the member is still on the board: %v", err)
	}
	if n := c.Exists(f.ctx, metaKey(cheater), highKey(cheater)).Val(); n != 0 {
		t.Fatalf("%d companion keys left", n)
	}
	if got := f.boardWithout(cheater); got != others {
		t.Fatal("other members were touched")
	}
	for k, want := range p7 {
		if got := f.snap(lbDB, k); got.dump != want.dump {
			t.Fatalf("%s was touched", k)
		}
	}

	// The record: the member and its score, the companions' DUMP and TTL.
	recs := f.records()
	intent, done := recs[len(recs)-2], recs[len(recs)-1]
	if done.ID != out.ID || done.Outcome != OutcomeOK || intent.Phase != PhaseIntent || done.Ref != intent.ID ||
		done.Action != lbKind || done.User != support.User || done.Args["member"] != cheater {
		t.Fatalf("audit:\n%+v\n%+v", intent, done)
	}
	if fmt.Sprint(intent.Keys) != fmt.Sprint([]string{lbBoard, metaKey(cheater), highKey(cheater)}) {
		t.Fatalf("keys %q", intent.Keys)
	}
	bt := intent.Targets[0]
	if bt.Member == nil || !reflect.DeepEqual(*bt.Member, MemberState{Name: cheater, Present: true, Score: "99999", Rank: 0}) || bt.Prior != "" || bt.Type != "zset" || bt.Size != 251 {
		t.Fatalf("board target %+v %+v", bt, bt.Member)
	}
	for i, k := range []string{metaKey(cheater), highKey(cheater)} {
		tg := intent.Targets[i+1]
		if tg.Member != nil || tg.Prior != base64.StdEncoding.EncodeToString([]byte(before[k].dump)) || tg.PTTL <= 0 {
			t.Fatalf("%s target %+v", k, tg)
		}
	}
	if m := done.Targets[0].Member; m == nil || m.Present || done.Targets[0].After != fpAbsent {
		t.Fatalf("outcome board target %+v", done.Targets[0])
	}
	f.noBoardDump(boardDump)

	_, err = f.r.Preview(f.ctx, support, f.conn, lbKind, f.entryReq(cheater))
	wantErr(t, err, ErrNotFound, `"10042" is not on leaderboard`)

	// Undo (admin): the member with its score, the hash with its exact
	// fields and the high score with its TTL.
	_, err = f.r.Preview(f.ctx, support, f.conn, "undo", UndoRequest(done))
	wantErr(t, err, ErrForbidden, "admin")
	upv, err := f.r.Preview(f.ctx, admin, f.conn, "undo", UndoRequest(done))
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "undo summary", upv.Summary, `ADD member "10042" back to "mg:score:leaderboard:snake" with score 99999`,
		`RESTORE "mg:score:user-meta:snake:10042"`, `RESTORE "mg:score:high:snake:10042"`)
	undo, err := f.r.Execute(f.ctx, admin, f.conn, upv)
	if err != nil {
		t.Fatal(err)
	}
	if s, err := c.ZScore(f.ctx, lbBoard, cheater).Result(); err != nil || s != 99999 {
		t.Fatalf("score after undo %v %v", s, err)
	}
	if r := c.ZRevRank(f.ctx, lbBoard, cheater).Val(); r != 0 {
		t.Fatalf("rank after undo %d", r)
	}
	if got := c.HGetAll(f.ctx, metaKey(cheater)).Val(); !maps.Equal(got, metaFields) {
		t.Fatalf("meta after undo %v, want %v", got, metaFields)
	}
	if got := c.Get(f.ctx, highKey(cheater)).Val(); got != "99999" {
		t.Fatalf("high score after undo %q", got)
	}
	for k, want := range before {
		got := f.snap(lbDB, k)
		if got.dump != want.dump || got.pttl < 0 || (want.pttl-got.pttl).Abs() > 3*time.Second {
			t.Fatalf("%s after undo %+v, want %+v", k, got, want)
		}
	}
	if got := f.boardWithout(cheater); got != others {
		t.Fatal("undo touched other members")
	}
	f.noBoardDump(boardDump)

	// Undoing the undo removes the entry again; the undo cannot be repeated.
	_, err = f.r.Preview(f.ctx, admin, f.conn, "undo", UndoRequest(done))
	wantErr(t, err, ErrNotUndoable, "already undone")
	undoRec, err := f.r.Audit().Get(f.ctx, undo.ID)
	if err != nil {
		t.Fatal(err)
	}
	f.mustRun(admin, "undo", UndoRequest(undoRec))
	if c.ZScore(f.ctx, lbBoard, cheater).Err() != redis.Nil || c.Exists(f.ctx, metaKey(cheater), highKey(cheater)).Val() != 0 {
		t.Fatal("undoing the undo did not remove the entry again")
	}
	if got := f.boardWithout(cheater); got != others {
		t.Fatal("redo touched other members")
	}
}

// A live board takes other scores all the time: they neither refuse the
// action nor get lost, while a change of this entry does refuse it.
func TestRemoveLeaderboardEntryLiveBoard(t *testing.T) {
	f := eisland(t)
	c := f.db(lbDB)
	f.seedBoard(100)
	for _, m := range []string{"a", "b", "c", "d", "e", "f"} {
		f.seedEntry(m, 500)
	}
	other := func(i int) { c.ZAdd(f.ctx, lbBoard, redis.Z{Score: float64(i), Member: "new-" + strconv.Itoa(i)}) }
	gone := func(m string) bool {
		return c.ZScore(f.ctx, lbBoard, m).Err() == redis.Nil && c.Exists(f.ctx, metaKey(m), highKey(m)).Val() == 0
	}
	intact := func(m string) {
		t.Helper()
		if c.ZScore(f.ctx, lbBoard, m).Err() != nil || c.Exists(f.ctx, metaKey(m), highKey(m)).Val() != 2 {
			t.Fatalf("entry %q was (partly) removed", m)
		}
	}

	// Other members change between preview and confirm: no ErrChanged.
	pv, err := f.r.Preview(f.ctx, support, f.conn, lbKind, f.entryReq("a"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		other(i)
	}
	c.ZIncrBy(f.ctx, lbBoard, 1000, "p3") // p3 overtakes "a": its rank moves, its score does not
	c.ZRem(f.ctx, lbBoard, "p4")
	if _, err := f.r.Execute(f.ctx, support, f.conn, pv); err != nil {
		t.Fatalf("a live board refused the removal: %v", err)
	}
	if !gone("a") || c.ZCard(f.ctx, lbBoard).Val() != 100+5+20-1 {
		t.Fatalf("a not removed, or others lost (%d members)", c.ZCard(f.ctx, lbBoard).Val())
	}

	// …and while committing: EXEC fails, the runner reads again, retries.
	var calls atomic.Int32
	f.r.opts.beforeExec = func() {
		if n := calls.Add(1); n <= 2 {
			other(100 + int(n))
		}
	}
	n0 := len(f.records())
	f.mustRun(support, lbKind, f.entryReq("b"))
	if calls.Load() != 3 || !gone("b") {
		t.Fatalf("%d attempts; removed: %v", calls.Load(), gone("b"))
	}
	if n := c.ZCard(f.ctx, lbBoard).Val(); n != 100+4+20-1+2 {
		t.Fatalf("%d members: a concurrent write was lost", n)
	}
	if recs := f.records()[n0:]; len(recs) != 2 || recs[0].Phase != PhaseIntent || recs[1].Outcome != OutcomeOK {
		t.Fatalf("a retry wrote a second intent, or none: %+v", recs)
	}

	// A board written during every attempt: refused, nothing removed, one intent.
	n0 = len(f.records())
	calls.Store(0)
	f.r.opts.beforeExec = func() { other(200 + int(calls.Add(1))) }
	_, err = f.run(support, lbKind, f.entryReq("c"))
	wantErr(t, err, ErrChanged, fmt.Sprintf("each of %d attempts", 1+memberRetries))
	if calls.Load() != 1+memberRetries {
		t.Fatalf("%d attempts", calls.Load())
	}
	intact("c")
	if recs := f.records()[n0:]; len(recs) != 2 || recs[0].Phase != PhaseIntent || recs[1].Outcome != OutcomeFailed || recs[1].Ref != recs[0].ID {
		t.Fatalf("audit %+v", recs)
	}

	// This member's score changes between preview and confirm: refused.
	f.r.opts.beforeExec = nil
	pv, err = f.r.Preview(f.ctx, support, f.conn, lbKind, f.entryReq("c"))
	if err != nil {
		t.Fatal(err)
	}
	c.ZAdd(f.ctx, lbBoard, redis.Z{Score: 501, Member: "c"})
	_, err = f.r.Execute(f.ctx, support, f.conn, pv)
	wantErr(t, err, ErrChanged, `member "c" of "mg:score:leaderboard:snake" is now score 501`)
	intact("c")

	// …or while committing (with other writes too): refused, the new score kept.
	pv, err = f.r.Preview(f.ctx, support, f.conn, lbKind, f.entryReq("c"))
	if err != nil {
		t.Fatal(err)
	}
	f.r.opts.beforeExec = func() { other(300); c.ZAdd(f.ctx, lbBoard, redis.Z{Score: 502, Member: "c"}) }
	_, err = f.r.Execute(f.ctx, support, f.conn, pv)
	f.r.opts.beforeExec = nil
	wantErr(t, err, ErrChanged, "now score 502")
	intact("c")
	if s := c.ZScore(f.ctx, lbBoard, "c").Val(); s != 502 {
		t.Fatalf("score %v", s)
	}

	// The same score written again is no change.
	pv, _ = f.r.Preview(f.ctx, support, f.conn, lbKind, f.entryReq("c"))
	c.ZAdd(f.ctx, lbBoard, redis.Z{Score: 502, Member: "c"})
	if _, err := f.r.Execute(f.ctx, support, f.conn, pv); err != nil || !gone("c") {
		t.Fatalf("%v", err)
	}

	// A companion changed since the preview: refused as for any key.
	pv, _ = f.r.Preview(f.ctx, support, f.conn, lbKind, f.entryReq("d"))
	c.HSet(f.ctx, metaKey("d"), "moves", 413)
	_, err = f.r.Execute(f.ctx, support, f.conn, pv)
	wantErr(t, err, ErrChanged, `"mg:score:user-meta:snake:d" is now hash`)
	intact("d")
	// A companion that appears after the preview is a change too.
	c.Del(f.ctx, highKey("d"))
	pv, _ = f.r.Preview(f.ctx, support, f.conn, lbKind, f.entryReq("d"))
	if pv.Changes[2].Op != "none" || !strings.Contains(pv.Changes[2].Text, "absent") {
		t.Fatalf("absent companion: %+v", pv.Changes[2])
	}
	c.Set(f.ctx, highKey("d"), "500", time.Hour)
	_, err = f.r.Execute(f.ctx, support, f.conn, pv)
	wantErr(t, err, ErrChanged, highKey("d"))
	intact("d")

	// A steady stream of other players' scores while entries are removed.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var writes atomic.Int64
	wg.Go(func() {
		w := f.target.Client(lbDB)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			w.ZAdd(f.ctx, lbBoard, redis.Z{Score: float64(i % 1000), Member: "live-" + strconv.Itoa(i%50)})
			writes.Add(1)
			time.Sleep(2 * time.Millisecond) // a load generator: its rate is real time
		}
	})
	for _, m := range []string{"d", "e", "f"} {
		n := writes.Load()
		redistest.Eventually(t, 10*time.Second, "writes between removals", func() bool { return writes.Load() >= n+3 })
		out, err := f.run(support, lbKind, f.entryReq(m))
		if err != nil {
			close(stop)
			wg.Wait()
			t.Fatalf("removing %q under load: %v", m, err)
		}
		if !gone(m) || len(out.Changes) != 3 {
			t.Fatalf("%q not removed", m)
		}
	}
	close(stop)
	wg.Wait()
	if writes.Load() == 0 {
		t.Fatal("no concurrent writes happened")
	}
}

func TestRemoveLeaderboardEntryRefuses(t *testing.T) {
	f := eisland(t)
	f.seedBoard(10)
	f.seedEntry("u1", 42)

	for _, a := range []Actor{viewer, {Level: Support}} {
		_, err := f.r.Preview(f.ctx, a, f.conn, lbKind, f.entryReq("u1"))
		wantErr(t, err, ErrForbidden, "")
	}
	if !f.r.Allowed(support, lbKind) || f.r.Allowed(viewer, lbKind) {
		t.Fatal("roles wrong")
	}
	pv, err := f.r.Preview(f.ctx, support, f.conn, lbKind, f.entryReq("u1"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.r.Execute(f.ctx, viewer, f.conn, pv)
	wantErr(t, err, ErrForbidden, "needs the support role")
	if rec := f.last(); rec.Outcome != OutcomeRefused || rec.User != viewer.User || rec.Action != lbKind {
		t.Fatalf("audit %+v", rec)
	}
	if f.db(lbDB).Exists(f.ctx, metaKey("u1"), highKey("u1")).Val() != 2 || f.db(lbDB).ZScore(f.ctx, lbBoard, "u1").Val() != 42 {
		t.Fatal("a refused action touched the entry")
	}

	// Only leaderboards, named by family and role.
	for _, c := range []struct{ key, says string }{
		{highKey("u1"), `"mg:score:high:snake:u1" is family mg-score-high (role cache)`},
		{metaKey("u1"), `"mg:score:user-meta:snake:u1" is family mg-user-meta (role leaderboard-meta)`},
		{"mg:score:lock:snake:u1", `"mg:score:lock:snake:u1" is family mg-score-lock (role lock)`},
	} {
		_, err = f.r.Preview(f.ctx, support, f.conn, lbKind, f.req(lbDB, c.key, "member", "u1"))
		wantErr(t, err, ErrInvalid, "Remove leaderboard entry applies only to leaderboards (role leaderboard); "+c.says)
	}
	_, err = f.r.Preview(f.ctx, support, f.conn, lbKind, f.req(0, "no:such:family", "member", "u1"))
	wantErr(t, err, ErrInvalid, "belongs to no family of pack eisland")
	_, err = f.r.Preview(f.ctx, support, f.conn, lbKind, f.req(lbDB, lbBoard))
	wantErr(t, err, ErrInvalid, "member is required")
	_, err = f.r.Preview(f.ctx, support, f.conn, lbKind, f.req(lbDB, lbBoard, "member", "u1", "ttl", "1m"))
	wantErr(t, err, ErrInvalid, "unknown argument")
	_, err = f.r.Preview(f.ctx, support, f.conn, lbKind, f.entryReq("nobody"))
	wantErr(t, err, ErrNotFound, `"nobody" is not on leaderboard`)
	_, err = f.r.Preview(f.ctx, support, f.conn, lbKind, f.req(lbDB, "mg:score:leaderboard:gone", "member", "u1"))
	wantErr(t, err, ErrNotFound, "is not on leaderboard")
	// A board whose game id cannot name the companions (they take a segment).
	f.db(lbDB).ZAdd(f.ctx, "mg:score:leaderboard:a:b", redis.Z{Score: 1, Member: "u1"})
	_, err = f.r.Preview(f.ctx, support, f.conn, lbKind, f.req(lbDB, "mg:score:leaderboard:a:b", "member", "u1"))
	wantErr(t, err, ErrInvalid, "cannot be removed whole")
	// A board key of the wrong type.
	f.db(lbDB).Set(f.ctx, "mg:score:leaderboard:str", "x", 0)
	_, err = f.r.Preview(f.ctx, support, f.conn, lbKind, f.req(lbDB, "mg:score:leaderboard:str", "member", "u1"))
	wantErr(t, err, ErrInvalid, "is a string, but keys of family mg-leaderboard (role leaderboard) are of type zset")
	// Without a pack nothing is a leaderboard.
	bare := f.open(f.target.URL(0))
	_, err = f.r.Preview(f.ctx, support, bare, lbKind, f.entryReq("u1"))
	wantErr(t, err, ErrInvalid, "has no schema pack")

	// Every leaderboard family of every built-in pack offers it.
	for _, pk := range schema.Builtin() {
		for _, fam := range pk.Families {
			if (fam.Role == schema.RoleLeaderboard) != (RemoveLeaderboardEntry{}).AppliesTo(fam) {
				t.Errorf("%s/%s (%s)", pk.Name, fam.ID, fam.Role)
			}
		}
	}
}

func TestUndoLeaderboardEntryRefuses(t *testing.T) {
	f := eisland(t)
	c := f.db(lbDB)
	f.seedBoard(10)

	// The application put the member back (a cold start, a new score).
	f.seedEntry("u1", 42)
	f.mustRun(support, lbKind, f.entryReq("u1"))
	done := f.last()
	c.ZAdd(f.ctx, lbBoard, redis.Z{Score: 7, Member: "u1"})
	_, err := f.r.Preview(f.ctx, admin, f.conn, "undo", UndoRequest(done))
	wantErr(t, err, ErrNotUndoable, `member "u1" of "mg:score:leaderboard:snake" was added again since the action (now score 7, rank #`)
	if c.ZScore(f.ctx, lbBoard, "u1").Val() != 7 || c.Exists(f.ctx, metaKey("u1"), highKey("u1")).Val() != 0 {
		t.Fatal("a refused undo touched the entry")
	}
	// Gone again: the undo may proceed.
	c.ZRem(f.ctx, lbBoard, "u1")
	if _, err := f.r.Preview(f.ctx, admin, f.conn, "undo", UndoRequest(done)); err != nil {
		t.Fatal(err)
	}

	// Only the metadata was backfilled: restoring it would discard that.
	f.seedEntry("u2", 43)
	f.mustRun(support, lbKind, f.entryReq("u2"))
	done = f.last()
	c.HSet(f.ctx, metaKey("u2"), "score", 43)
	_, err = f.r.Preview(f.ctx, admin, f.conn, "undo", UndoRequest(done))
	wantErr(t, err, ErrNotUndoable, `"mg:score:user-meta:snake:u2" changed since the action`)

	// The member re-added between the undo's preview and its confirmation.
	f.seedEntry("u3", 44)
	f.mustRun(support, lbKind, f.entryReq("u3"))
	done = f.last()
	pv, err := f.r.Preview(f.ctx, admin, f.conn, "undo", UndoRequest(done))
	if err != nil {
		t.Fatal(err)
	}
	c.ZAdd(f.ctx, lbBoard, redis.Z{Score: 1, Member: "u3"})
	_, err = f.r.Execute(f.ctx, admin, f.conn, pv)
	wantErr(t, err, ErrChanged, `member "u3"`)
	if c.ZScore(f.ctx, lbBoard, "u3").Val() != 1 || c.Exists(f.ctx, metaKey("u3"), highKey("u3")).Val() != 0 {
		t.Fatal("a refused undo touched the entry")
	}
	// Other members moving during the undo do not stop it.
	c.ZRem(f.ctx, lbBoard, "u3")
	pv, err = f.r.Preview(f.ctx, admin, f.conn, "undo", UndoRequest(done))
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	f.r.opts.beforeExec = func() {
		if calls.Add(1) == 1 {
			c.ZAdd(f.ctx, lbBoard, redis.Z{Score: 5, Member: "during-undo"})
		}
	}
	if _, err := f.r.Execute(f.ctx, admin, f.conn, pv); err != nil {
		t.Fatal(err)
	}
	f.r.opts.beforeExec = nil
	if c.ZScore(f.ctx, lbBoard, "u3").Val() != 44 || c.ZScore(f.ctx, lbBoard, "during-undo").Val() != 5 || calls.Load() != 2 {
		t.Fatal("undo under a concurrent write")
	}
}

// Member names are attacker-controlled: any bytes a user id may hold are
// removed and restored exactly, and reported quoted.
func TestRemoveLeaderboardEntryHostileMembers(t *testing.T) {
	f := eisland(t)
	c := f.db(lbDB)
	f.seedBoard(20)
	members := []string{
		"玩家🎮",
		"ops:admin:1",
		"  spaced   out ",
		`<img src=x onerror=alert(1)>&amp;"'</td>`,
		"line\nbreak\ttab\x00nul",
	}
	for i, m := range members {
		f.seedEntry(m, float64(1000+i)+0.1) // a score that is not a short decimal in binary
	}
	f.seedEntry("1", 5)
	others := f.boardWithout("")
	boardDump := f.snap(lbDB, lbBoard).dump
	for i, m := range members {
		score := float64(1000+i) + 0.1
		before := map[string]snap{metaKey(m): f.snap(lbDB, metaKey(m)), highKey(m): f.snap(lbDB, highKey(m))}
		pv, err := f.r.Preview(f.ctx, support, f.conn, lbKind, f.entryReq(m))
		if err != nil {
			t.Fatalf("%q: %v", m, err)
		}
		mustContain(t, "summary", pv.Summary, "REMOVE ENTRY "+quoteKey(m), quoteKey(metaKey(m)), quoteKey(highKey(m)), "score "+formatScore(score))
		if _, err := f.r.Execute(f.ctx, support, f.conn, pv); err != nil {
			t.Fatalf("%q: %v", m, err)
		}
		if c.ZScore(f.ctx, lbBoard, m).Err() != redis.Nil || c.Exists(f.ctx, metaKey(m), highKey(m)).Val() != 0 {
			t.Fatalf("%q not removed", m)
		}
		if c.Exists(f.ctx, metaKey("1"), highKey("1")).Val() != 2 || c.ZScore(f.ctx, lbBoard, "1").Val() != 5 {
			t.Fatalf("removing %q touched another entry", m)
		}
		if rec := f.last(); rec.Args["member"] != m || len(rec.Keys) != 3 || rec.Keys[1] != metaKey(m) {
			t.Fatalf("%q: record %+v", m, rec)
		}
		f.undoAndCheck(lbDB, before)
		if s, err := c.ZScore(f.ctx, lbBoard, m).Result(); err != nil || s != score {
			t.Fatalf("%q: score after undo %v (%v), want %v", m, s, err, score)
		}
	}
	if got := f.boardWithout(""); got != others {
		t.Fatal("the board is not as it was")
	}
	f.noBoardDump(boardDump)

	// Scores that are not plain decimals come back exactly.
	for _, score := range []float64{math.Inf(1), math.Inf(-1), 0.1, 1e21, -0.0} {
		f.seedEntry("odd", score)
		f.mustRun(support, lbKind, f.entryReq("odd"))
		if rec := f.last(); rec.Outcome != OutcomeOK {
			t.Fatalf("%v: %+v", score, rec)
		}
		f.mustRun(admin, "undo", UndoRequest(f.last()))
		if got, err := c.ZScore(f.ctx, lbBoard, "odd").Result(); err != nil || got != score {
			t.Fatalf("score %v came back as %v (%v)", score, got, err)
		}
		c.Del(f.ctx, metaKey("odd"), highKey("odd"))
		c.ZRem(f.ctx, lbBoard, "odd")
	}
}

// A board far larger than an audit record may hold: whole-key actions are
// refused, the entry action never reads the board's value.
func TestRemoveLeaderboardEntryBigBoard(t *testing.T) {
	f := eisland(t)
	c := f.db(lbDB)
	const n = 60000
	for start := 0; start < n; start += 5000 {
		var zs []redis.Z
		for i := start; i < start+5000; i++ {
			zs = append(zs, redis.Z{Score: float64(i), Member: fmt.Sprintf("player-%08d-with-a-long-name", i)})
		}
		if err := c.ZAdd(f.ctx, lbBoard, zs...).Err(); err != nil {
			t.Fatal(err)
		}
	}
	f.seedEntry("cheat", n/2+0.5)
	_, err := f.r.Preview(f.ctx, admin, f.conn, "delete-key", f.req(lbDB, lbBoard))
	wantErr(t, err, ErrInvalid, "more than the")

	pv, err := f.r.Preview(f.ctx, support, f.conn, lbKind, f.entryReq("cheat"))
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "summary", pv.Summary, fmt.Sprintf("rank #%d of %d, score 30000.5", n/2, n+1))
	f.mustRun(support, lbKind, f.entryReq("cheat"))
	if c.ZCard(f.ctx, lbBoard).Val() != n {
		t.Fatal("not removed")
	}
	for _, m := range f.raw() {
		if l := len(fmt.Sprint(m.Values)); l > 8<<10 {
			t.Fatalf("audit entry %s is %d bytes", m.ID, l)
		}
	}
	f.mustRun(admin, "undo", UndoRequest(f.last()))
	if c.ZScore(f.ctx, lbBoard, "cheat").Val() != n/2+0.5 || c.ZCard(f.ctx, lbBoard).Val() != n+1 {
		t.Fatal("undo")
	}
}

// failWatch, once armed, fails the next WATCH as a lost connection would,
// without sending it.
type failWatch struct{ armed atomic.Bool }

func (h *failWatch) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *failWatch) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if cmd.Name() == "watch" && h.armed.CompareAndSwap(true, false) {
			cmd.SetErr(io.ErrUnexpectedEOF)
			return io.ErrUnexpectedEOF
		}
		return next(ctx, cmd)
	}
}
func (h *failWatch) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// The first attempt's EXEC is aborted (another member written: nothing
// applied), and the retry's WATCH fails unreachable before any EXEC: the
// failure is not a lost EXEC, so the confirmation is released and the
// same confirmation then runs.
func TestRemoveLeaderboardEntryRetryUnreachableBeforeExec(t *testing.T) {
	f := eisland(t)
	c := f.db(lbDB)
	f.seedBoard(10)
	f.seedEntry("a", 500)
	h := &failWatch{}
	f.conn.AddHook(h)
	var calls atomic.Int32
	f.r.opts.beforeExec = func() {
		if calls.Add(1) == 1 {
			c.ZAdd(f.ctx, lbBoard, redis.Z{Score: 1, Member: "new-1"})
			h.armed.Store(true)
		}
	}
	pv, err := f.r.Preview(f.ctx, support, f.conn, lbKind, f.entryReq("a"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.r.Execute(f.ctx, support, f.conn, pv)
	wantErr(t, err, ErrRedis, "Redis unreachable while watching the keys")
	if strings.Contains(err.Error(), "while committing") {
		t.Fatalf("taken for a lost EXEC: %v", err)
	}
	if h.armed.Load() || calls.Load() != 1 {
		t.Fatalf("armed %v after %d attempts", h.armed.Load(), calls.Load())
	}
	if c.ZScore(f.ctx, lbBoard, "a").Err() != nil {
		t.Fatal("removed by a failed confirmation")
	}
	if _, err := f.r.Execute(f.ctx, support, f.conn, pv); err != nil {
		t.Fatalf("the confirmation again, nothing having been sent: %v", err)
	}
	if c.ZScore(f.ctx, lbBoard, "a").Err() != redis.Nil {
		t.Fatal("not removed")
	}
}
