package action

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/demo"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/bans"
	"github.com/keydeck/keydeck/redisview/schema"
)

const (
	banBloom = "user:ban:bloom"
	banSet   = "user:ban:set"
	banBits  = 1000003
)

// banFixture is the eIsland ban list in DB 9, allocated, with names
// banned as the application bans them.
func banFixture(t *testing.T, names ...string) *fixture {
	f := eisland(t)
	db := f.db(9)
	if err := db.SetBit(f.ctx, banBloom, banBits-1, 0).Err(); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		db.SAdd(f.ctx, banSet, n)
		for _, off := range redisview.BloomPositions(n, banBits, 6) {
			db.SetBit(f.ctx, banBloom, off, 1)
		}
	}
	return f
}

func (f *fixture) banList() bans.List {
	l, ok := bans.ForKey(f.conn.Pack(), 9, banSet)
	if !ok {
		f.t.Fatal("no ban list")
	}
	return l
}

func (f *fixture) verdict(name string) bans.Check {
	f.t.Helper()
	ch, err := bans.CheckName(f.ctx, f.db(9), f.banList(), name)
	if err != nil {
		f.t.Fatal(err)
	}
	return ch
}

func (f *fixture) bloomBytes() string {
	f.t.Helper()
	s, err := f.db(9).Get(f.ctx, banBloom).Result()
	if err != nil {
		f.t.Fatal(err)
	}
	return s
}

// bloomOnes lists the offsets set in the bloom (a test may read 125 KB).
func bloomOnes(s string) map[int64]bool {
	out := map[int64]bool{}
	for i := 0; i < len(s); i++ {
		for b := 0; b < 8; b++ {
			if s[i]&(0x80>>b) != 0 {
				out[int64(i*8+b)] = true
			}
		}
	}
	return out
}

func TestBanUnbanUndo(t *testing.T) {
	f := banFixture(t, "old-1", "old-2")
	name := "Zoë <b>&amp;</b> ops:admin 😀"
	if v := f.verdict(name); v.Verdict != bans.NotListed {
		t.Fatalf("before: %+v", v)
	}
	before := bloomOnes(f.bloomBytes())

	// Ban: exactly the name's 6 positions are set, nothing else.
	pv, err := f.r.Preview(f.ctx, support, f.conn, KindBan, f.req(9, banSet, ArgName, name))
	if err != nil {
		t.Fatal(err)
	}
	offs := redisview.BloomPositions(name, banBits, 6)
	mustContain(t, "summary", pv.Summary, "BAN "+quoteKey(name), "add it to the ban set", "set its 6 bloom bits", fmt.Sprint(offs[0]))
	if !pv.Undoable || strings.Join(pv.Notes, " ") == "" || !strings.Contains(strings.Join(pv.Notes, " "), "leaves its bloom bits") {
		t.Fatalf("preview %+v", pv)
	}
	if _, err := f.r.Execute(f.ctx, support, f.conn, pv); err != nil {
		t.Fatal(err)
	}
	if v := f.verdict(name); v.Verdict != bans.Listed || v.Words != "banned" {
		t.Fatalf("after ban: %+v", v)
	}
	after := bloomOnes(f.bloomBytes())
	want := map[int64]bool{}
	for k := range before {
		want[k] = true
	}
	for _, o := range offs {
		want[o] = true
	}
	if len(after) != len(want) {
		t.Fatalf("ban set %d bits, want exactly the name's 6 added to %d", len(after), len(before))
	}
	for o := range want {
		if !after[o] {
			t.Fatalf("bit %d not set", o)
		}
	}
	// The audit records the name and its bits, never the bloom.
	rec := f.last()
	if rec.Action != KindBan || rec.Args[ArgName] != name || len(rec.Targets) != 2 {
		t.Fatalf("record %+v", rec)
	}
	for _, raw := range f.raw() {
		for k, v := range raw.Values {
			if s, _ := v.(string); len(s) > 10000 {
				t.Fatalf("audit field %s holds %d bytes: a DUMP of the bloom?", k, len(s))
			}
		}
	}

	// Undo of the ban: the name leaves the set, its bits stay.
	upv, err := f.r.Preview(f.ctx, admin, f.conn, KindUndo, UndoRequest(f.last()))
	if err != nil {
		t.Fatal(err)
	}
	if len(upv.Changes) != 1 || upv.Changes[0].Key != banSet || !strings.Contains(strings.Join(upv.Notes, " "), "stay set") {
		t.Fatalf("undo preview %+v", upv)
	}
	if _, err := f.r.Execute(f.ctx, admin, f.conn, upv); err != nil {
		t.Fatal(err)
	}
	if v := f.verdict(name); v.Verdict != bans.FalsePositive {
		t.Fatalf("after undo of the ban: %+v, want bits left and not banned", v)
	}

	// Ban again (only the set needs it now), then unban: SREM only.
	f.mustRun(support, KindBan, f.req(9, banSet, ArgName, name))
	bits := f.bloomBytes()
	pv, err = f.r.Preview(f.ctx, support, f.conn, KindUnban, f.req(9, banBloom, ArgName, name))
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "summary", pv.Summary, "UNBAN "+quoteKey(name), "leave its bloom bits")
	if !strings.Contains(strings.Join(pv.Notes, " "), "false-positive rate") {
		t.Fatalf("unban notes %q", pv.Notes)
	}
	if _, err := f.r.Execute(f.ctx, support, f.conn, pv); err != nil {
		t.Fatal(err)
	}
	if v := f.verdict(name); v.Verdict != bans.FalsePositive || v.Words != "bloom says maybe, set says no: not banned — false positive" {
		t.Fatalf("after unban: %+v", v)
	}
	if f.bloomBytes() != bits {
		t.Fatal("unban changed the bloom")
	}
	// Unban of a name not banned is refused.
	if _, err := f.r.Preview(f.ctx, support, f.conn, KindUnban, f.req(9, banSet, ArgName, "never-banned")); err == nil {
		t.Fatal("unban of a name not in the set was previewed")
	} else {
		wantErr(t, err, ErrNotFound, "not banned")
	}

	// Undo of the unban re-adds the name.
	f.mustRun(admin, KindUndo, UndoRequest(f.last()))
	if v := f.verdict(name); v.Verdict != bans.Listed {
		t.Fatalf("after undo of the unban: %+v", v)
	}
	// A viewer may do neither.
	if _, err := f.r.Preview(f.ctx, viewer, f.conn, KindUnban, f.req(9, banSet, ArgName, name)); err == nil {
		t.Fatal("a viewer previewed an unban")
	}
}

func TestBanRefusedOnReadOnlyBloomsAndOtherKeys(t *testing.T) {
	f := banFixture(t)
	for _, tc := range []struct {
		db  int
		key string
	}{{0, "version:app:bloom"}, {3, "wallpaper:detail:set"}, {9, "user:ban:elsewhere"}} {
		_, err := f.r.Preview(f.ctx, admin, f.conn, KindBan, f.req(tc.db, tc.key, ArgName, "x"))
		wantErr(t, err, ErrInvalid, "applies only to ban lists")
	}
}

func TestBanDisabledWhileBloomMismatched(t *testing.T) {
	f := eisland(t)
	db := f.db(9)
	db.SetBit(f.ctx, banBloom, banBits-1, 0)
	// The application's bloom was written with another bit count.
	for i := range 50 {
		n := fmt.Sprintf("u%d", i)
		db.SAdd(f.ctx, banSet, n)
		for _, off := range redisview.BloomPositions(n, 1<<20, 6) {
			db.SetBit(f.ctx, banBloom, off, 1)
		}
	}
	for _, kind := range []string{KindBan, KindUnban} {
		_, err := f.r.Preview(f.ctx, support, f.conn, kind, f.req(9, banSet, ArgName, "u1"))
		wantErr(t, err, ErrInvalid, "silently ignored")
	}

	// Rebuild (admin) fixes it, and is undone to the previous bloom.
	old := f.snap(9, banBloom)
	l := f.banList()
	req := f.req(9, banBloom)
	if _, err := f.r.Preview(f.ctx, support, f.conn, KindRebuildBloom, req); err == nil {
		t.Fatal("support previewed a rebuild")
	}
	pv, err := f.r.Preview(f.ctx, admin, f.conn, KindRebuildBloom, req)
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "summary", pv.Summary, "REPLACE the bloom", "rebuilt from the 50 members", "one SET")
	if _, err := f.r.Execute(f.ctx, admin, f.conn, pv); err != nil {
		t.Fatal(err)
	}
	bans.CheckerFor(f.conn, l).Restart()
	if bad, _ := bans.Sample(context.Background(), db, l, 50); len(bad) != 0 {
		t.Fatalf("after the rebuild %v lack bits", bad)
	}
	if v := f.verdict("u7"); v.Verdict != bans.Listed {
		t.Fatalf("u7 after rebuild: %+v", v)
	}
	// Ban works again.
	f.mustRun(support, KindBan, f.req(9, banSet, ArgName, "new-one"))
	if v := f.verdict("new-one"); v.Verdict != bans.Listed {
		t.Fatalf("new-one: %+v", v)
	}
	// Undo of the rebuild is refused now that the bloom changed since…
	var rebuildRec Record
	for _, r := range f.records() {
		if r.Action == KindRebuildBloom && r.Phase == PhaseOutcome && r.Outcome == OutcomeOK {
			rebuildRec = r
		}
	}
	if _, err := f.r.Preview(f.ctx, admin, f.conn, KindUndo, UndoRequest(rebuildRec)); err == nil {
		t.Fatal("undo of a rebuild previewed though the bloom changed since")
	}
	// …and restores the previous bloom once that ban is undone… (its bits
	// stay, so the bloom still differs: refused, honestly). Rebuild again
	// and undo straight away instead.
	db.SRem(f.ctx, banSet, "new-one")
	prev := f.snap(9, banBloom)
	f.mustRun(admin, KindRebuildBloom, f.req(9, banBloom))
	f.undoAndCheck(9, map[string]snap{banBloom: prev})
	if prev.dump == old.dump {
		t.Fatal("test broken: the first rebuild changed nothing")
	}
}

// On the embedded demo (no DUMP: the rebuild is recorded element-wise)
// its seeded ban list answers as on real Redis: unban, ban, their undo,
// and a rebuild and its undo.
func TestBansOnEmbeddedDemo(t *testing.T) {
	f := setup(t, Options{})
	d, err := demo.Start(f.ctx, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	f.conn = f.open(d.Connections()[0].URL)
	f.conn.ForcePack(schema.BuiltinPack("eisland"))
	opts, _ := redis.ParseURL(d.Connections()[0].URL + "/9")
	opts.DisableIdentity = true
	c := redis.NewClient(opts)
	t.Cleanup(func() { c.Close() })
	l := f.banList()
	check := func(name string) bans.Verdict {
		t.Helper()
		ch, err := bans.CheckName(f.ctx, c, l, name)
		if err != nil {
			t.Fatal(err)
		}
		return ch.Verdict
	}
	for _, n := range []string{"韩梅梅", "🦊fox", `eve"><script>alert(1)</script>'`, "ops:root admin"} {
		if v := check(n); v != bans.Listed {
			t.Fatalf("seeded %q: %s", n, v)
		}
	}
	if v := check("alice-not-banned"); v != bans.NotListed {
		t.Fatalf("alice: %s", v)
	}
	f.mustRun(support, KindUnban, f.req(9, banSet, ArgName, "韩梅梅"))
	if v := check("韩梅梅"); v != bans.FalsePositive {
		t.Fatalf("after unban: %s", v)
	}
	f.mustRun(admin, KindUndo, UndoRequest(f.last()))
	if v := check("韩梅梅"); v != bans.Listed {
		t.Fatalf("after undo of the unban: %s", v)
	}
	f.mustRun(support, KindBan, f.req(9, banBloom, ArgName, "new <b>ban</b>"))
	if v := check("new <b>ban</b>"); v != bans.Listed {
		t.Fatalf("after ban: %s", v)
	}
	f.mustRun(admin, KindUndo, UndoRequest(f.last()))
	if v := check("new <b>ban</b>"); v != bans.FalsePositive {
		t.Fatalf("after undo of the ban: %s", v)
	}
	before, _ := c.Get(f.ctx, banBloom).Result()
	f.mustRun(admin, KindRebuildBloom, f.req(9, banBloom))
	if v := check("new <b>ban</b>"); v != bans.NotListed {
		t.Fatalf("after the rebuild the undone ban's bits should be gone: %s", v)
	}
	f.mustRun(admin, KindUndo, UndoRequest(f.last()))
	if after, _ := c.Get(f.ctx, banBloom).Result(); after != before {
		t.Fatal("undo of the rebuild did not restore the previous bloom")
	}
	// A member added to the set by hand, without its bits: support sets
	// them (WATCH, SETBIT in MULTI on the embedded server too) and the
	// undo clears exactly those again.
	const byHand = " by hand\xff "
	if err := c.SAdd(f.ctx, banSet, byHand).Err(); err != nil {
		t.Fatal(err)
	}
	if v := check(byHand); v != bans.Missed {
		t.Fatalf("hand-added %q: %s", byHand, v)
	}
	f.mustRun(support, "set-bloom-bits", f.req(9, banSet, "member", byHand))
	if v := check(byHand); v != bans.Listed {
		t.Fatalf("after set-bloom-bits: %s", v)
	}
	if rec := f.last(); rec.Args["member"] != byHand || rec.Outcome != OutcomeOK {
		t.Fatalf("audit %+v", rec)
	}
	// A name banned since that shares one of those bits keeps it: the
	// undo reads the set (SSCAN, with the set watched) and leaves the
	// bits other members need.
	y := sharing(t, byHand, "demo shares ", l.Bits)
	f.mustRun(support, KindBan, f.req(9, banSet, ArgName, y))
	f.mustRun(admin, KindUndo, UndoRequest(f.lastOf(KindSetBloomBits)))
	if v := check(byHand); v != bans.Missed {
		t.Fatalf("after undo of set-bloom-bits: %s", v)
	}
	if v := check(y); v != bans.Listed {
		t.Fatalf("undo of set-bloom-bits of %q un-banned %q, which shares a bit with it: %s", byHand, y, v)
	}
	if rec := f.last(); !strings.Contains(rec.Summary, quoteKey(y)) || !strings.Contains(rec.Summary, "stay set") {
		t.Fatalf("the undo does not say which bits stay: %q", rec.Summary)
	}
}
