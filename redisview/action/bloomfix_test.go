package action

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/bans"
)

// allKeys lists every key of every database of the target server (SCAN:
// a test server holds a handful), "db:key", sorted.
func (f *fixture) allKeys() []string {
	f.t.Helper()
	var out []string
	for db := range 16 {
		c := f.db(db)
		var cursor uint64
		for {
			keys, next, err := c.Scan(f.ctx, cursor, "*", 1000).Result()
			if err != nil {
				f.t.Fatal(err)
			}
			for _, k := range keys {
				out = append(out, string(rune('a'+db))+":"+k)
			}
			if cursor = next; cursor == 0 {
				break
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// handAdded is a member added to the ban set by hand, without its bits.
const handAdded = "hand <b>added</b> \xff ops:x"

// addByHand adds name to the ban set as a person might by hand, setting
// only its bits at the indices setBits (as other names might have); it
// returns the name's positions.
func (f *fixture) addByHand(name string, setBits ...int) []int64 {
	f.t.Helper()
	f.db(9).SAdd(f.ctx, banSet, name)
	offs := redisview.BloomPositions(name, banBits, 6)
	for _, i := range setBits {
		f.db(9).SetBit(f.ctx, banBloom, offs[i], 1)
	}
	return offs
}

// settle runs the consistency check to the end of a pass.
func (f *fixture) settle() bans.Status {
	f.t.Helper()
	l := f.banList()
	ck := bans.CheckerFor(f.conn, l)
	ck.Restart()
	ck.MinGap = 0
	var st bans.Status
	for i := 0; st.Last == nil; i++ {
		var err error
		if st, err = ck.Step(f.ctx, f.db(9), time.Now(), 10); err != nil {
			f.t.Fatal(err)
		}
		if i > 100 {
			f.t.Fatal("the check does not end")
		}
	}
	return st
}

// The rebuild writes nothing before its confirmation (no key aside, the
// bloom untouched), writes the whole bloom at execution, and leaves no
// key behind once undone.
func TestRebuildWritesNothingBeforeTheConfirmation(t *testing.T) {
	f := banFixture(t, "a", "b", "c", "Zoë 😀")
	f.db(9).Expire(f.ctx, banBloom, time.Hour)
	f.addByHand(handAdded)
	before, bloom := f.allKeys(), f.snap(9, banBloom)

	pv, err := f.r.Preview(f.ctx, admin, f.conn, "rebuild-bloom", f.req(9, banBloom))
	if err != nil {
		t.Fatal(err)
	}
	if got := f.allKeys(); !slices.Equal(got, before) {
		t.Fatalf("the preview wrote keys: %v, before %v", got, before)
	}
	if f.snap(9, banBloom).dump != bloom.dump {
		t.Fatal("the preview changed the bloom")
	}
	mustContain(t, "summary", pv.Summary, "REPLACE the bloom", "the 5 members of")
	if f.verdict(handAdded).Verdict != bans.Missed {
		t.Fatal("test broken: the hand-added member has its bits")
	}
	if _, err := f.r.Execute(f.ctx, admin, f.conn, pv); err != nil {
		t.Fatal(err)
	}
	if got := f.allKeys(); !slices.Equal(got, before) {
		t.Fatalf("the rebuild left keys: %v, before %v", got, before)
	}
	for _, n := range []string{"a", "Zoë 😀", handAdded} {
		if v := f.verdict(n); v.Verdict != bans.Listed {
			t.Fatalf("%q after the rebuild: %+v", n, v)
		}
	}
	if ttl := f.db(9).PTTL(f.ctx, banBloom).Val(); ttl <= 0 || ttl > time.Hour {
		t.Fatalf("the rebuild lost the bloom's TTL: %v", ttl)
	}
	// The intent holds the prior bloom whole.
	var intent Record
	for _, r := range f.records() {
		if r.Action == "rebuild-bloom" && r.Phase == PhaseIntent {
			intent = r
		}
	}
	if len(intent.Targets) == 0 || intent.Targets[0].Key != banBloom || (intent.Targets[0].Prior == "" && intent.Targets[0].Snapshot == nil) {
		t.Fatalf("intent %+v", intent)
	}
	f.undoAndCheck(9, map[string]snap{banBloom: bloom})
	if got := f.allKeys(); !slices.Equal(got, before) {
		t.Fatalf("after the undo: %v, before %v", got, before)
	}
	for _, k := range f.allKeys() {
		if strings.Contains(k, "rebuild") {
			t.Fatalf("stray key %q", k)
		}
	}
}

// The bloom written is the one previewed: a member added since (with or
// without its bits) refuses the confirmation, and so does one added
// between the scan at execution and EXEC (the set is watched).
func TestRebuildRefusedWhenTheSetChanged(t *testing.T) {
	f := banFixture(t, "a", "b")
	bloom := f.snap(9, banBloom)
	for _, change := range []func(){
		func() { f.db(9).SAdd(f.ctx, banSet, "by-hand") },
		func() { // as the application bans
			f.db(9).SAdd(f.ctx, banSet, "by-app")
			for _, off := range redisview.BloomPositions("by-app", banBits, 6) {
				f.db(9).SetBit(f.ctx, banBloom, off, 1)
			}
		},
	} {
		pv, err := f.r.Preview(f.ctx, admin, f.conn, "rebuild-bloom", f.req(9, banBloom))
		if err != nil {
			t.Fatal(err)
		}
		change()
		_, err = f.r.Execute(f.ctx, admin, f.conn, pv)
		wantErr(t, err, ErrChanged, "preview again")
	}
	f.db(9).SRem(f.ctx, banSet, "by-hand", "by-app")
	bloom = f.snap(9, banBloom)
	pv, err := f.r.Preview(f.ctx, admin, f.conn, "rebuild-bloom", f.req(9, banBloom))
	if err != nil {
		t.Fatal(err)
	}
	f.r.opts.beforeExec = func() { f.db(9).SAdd(f.ctx, banSet, "late") }
	_, err = f.r.Execute(f.ctx, admin, f.conn, pv)
	f.r.opts.beforeExec = nil
	wantErr(t, err, ErrChanged, "")
	if f.snap(9, banBloom).dump != bloom.dump {
		t.Fatal("a refused rebuild changed the bloom")
	}
}

// One member added by hand without its bits: ban and unban of other
// names go on; of that name they are refused, pointing to the fix;
// support sets exactly its missing bits (audited, byte-exact), and undo
// (admin) clears them again.
func TestSetBloomBitsFixesOneMember(t *testing.T) {
	f := banFixture(t, "a", "b", "c", "d", "e", "f")
	offs := f.addByHand(handAdded, 1, 4)
	// Two of its bits are set already (as if by other names).
	st := f.settle()
	if !st.Inconsistent() || st.Last.Bad != 1 {
		t.Fatalf("check %+v", st.Last)
	}
	f.mustRun(support, KindBan, f.req(9, banSet, ArgName, "someone-else"))
	f.mustRun(support, KindUnban, f.req(9, banSet, ArgName, "a"))
	for _, kind := range []string{KindBan, KindUnban} {
		_, err := f.r.Preview(f.ctx, support, f.conn, kind, f.req(9, banSet, ArgName, handAdded))
		wantErr(t, err, ErrInvalid, "Set missing bloom bits")
	}
	if _, err := f.r.Preview(f.ctx, viewer, f.conn, "set-bloom-bits", f.req(9, banSet, "member", handAdded)); err == nil {
		t.Fatal("a viewer previewed set-bloom-bits")
	}
	prior := f.snap(9, banBloom)
	ones := bloomOnes(f.bloomBytes())
	pv, err := f.r.Preview(f.ctx, support, f.conn, "set-bloom-bits", f.req(9, banSet, "member", handAdded))
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "summary", pv.Summary, quoteKey(handAdded), "4 missing bloom bits", "010010")
	if _, err := f.r.Execute(f.ctx, support, f.conn, pv); err != nil {
		t.Fatal(err)
	}
	if v := f.verdict(handAdded); v.Verdict != bans.Listed {
		t.Fatalf("after the fix: %+v", v)
	}
	// Exactly its missing positions were set.
	after := bloomOnes(f.bloomBytes())
	var added []int64
	for off := range after {
		if !ones[off] {
			added = append(added, off)
		}
	}
	want := []int64{offs[0], offs[2], offs[3], offs[5]}
	slices.Sort(added)
	slices.Sort(want)
	if !slices.Equal(added, slices.Compact(want)) || len(after) != len(ones)+len(added) {
		t.Fatalf("set %v, want %v", added, want)
	}
	rec := f.last()
	if rec.User != "sam" || rec.Args["member"] != handAdded || rec.Outcome != OutcomeOK {
		t.Fatalf("audit %+v", rec)
	}
	if st := f.settle(); st.Inconsistent() {
		t.Fatalf("still inconsistent: %+v", st.Last)
	}
	// Ban and unban of the name work again.
	if _, err := f.r.Preview(f.ctx, support, f.conn, KindUnban, f.req(9, banSet, ArgName, handAdded)); err != nil {
		t.Fatal(err)
	}
	f.undoAndCheck(9, map[string]snap{banBloom: prior})
	if v := f.verdict(handAdded); v.Verdict != bans.Missed {
		t.Fatalf("after the undo: %+v", v)
	}
}

func TestSetBloomBitsRefusals(t *testing.T) {
	f := banFixture(t, "a", "b", "c")
	f.addByHand(handAdded)
	for _, tc := range []struct {
		member string
		err    error
		says   string
	}{
		{"not-there", ErrNotFound, "not in the ban set"},
		{"a", ErrInvalid, "has all its"},
	} {
		_, err := f.r.Preview(f.ctx, support, f.conn, "set-bloom-bits", f.req(9, banSet, "member", tc.member))
		wantErr(t, err, tc.err, tc.says)
	}
	_, err := f.r.Preview(f.ctx, support, f.conn, "set-bloom-bits", f.req(9, "version:app:bloom", "member", "x"))
	wantErr(t, err, ErrInvalid, "")
}

// Most members without their bits: the scheme is suspect, and nothing is
// written with it, by anyone but a rebuild.
func TestWidespreadMismatchDisablesBanAndFix(t *testing.T) {
	g := banFixture(t, "fine")
	for _, n := range []string{"p", "q", "r", "s", "t", "u", "v", "w"} {
		g.addByHand(n)
	}
	for _, settle := range []bool{true, false} { // the check's pass, and the sample drawn without one
		if settle {
			g.settle()
		} else {
			bans.CheckerFor(g.conn, g.banList()).Restart()
		}
		for _, kind := range []string{KindBan, KindUnban} {
			_, err := g.r.Preview(g.ctx, support, g.conn, kind, g.req(9, banSet, ArgName, "other"))
			wantErr(t, err, ErrInvalid, "silently ignored")
		}
		_, err := g.r.Preview(g.ctx, support, g.conn, "set-bloom-bits", g.req(9, banSet, "member", "p"))
		wantErr(t, err, ErrInvalid, "silently ignored")
	}
}

// A few members lacking bits are not a wrong scheme, however small the
// set or early the check: one name added by hand to an empty ban list
// (1 of 1 lacks its bits) is fixed with set-bloom-bits, and ban and unban
// of every other name go on (bans.TestWidespreadNeedsEnoughMembers has
// the rule's table).
func TestFewMembersLackingBitsAreNotWidespread(t *testing.T) {
	t.Run("empty list, one added by hand", func(t *testing.T) {
		f := banFixture(t)
		f.addByHand(handAdded)
		for _, settle := range []bool{false, true} {
			if settle {
				if st := f.settle(); st.Widespread() {
					t.Fatalf("1 member of 1 lacking bits judged widespread: %+v", st.Last)
				}
			}
			if _, err := f.r.Preview(f.ctx, support, f.conn, "set-bloom-bits", f.req(9, banSet, "member", handAdded)); err != nil {
				t.Fatalf("set-bloom-bits (check settled %v): %v", settle, err)
			}
		}
		f.mustRun(support, KindBan, f.req(9, banSet, ArgName, "other"))
		f.mustRun(support, KindUnban, f.req(9, banSet, ArgName, "other"))
		f.mustRun(support, "set-bloom-bits", f.req(9, banSet, "member", handAdded))
		if v := f.verdict(handAdded); v.Verdict != bans.Listed {
			t.Fatalf("after the fix: %+v", v)
		}
	})
}

// sharing returns a name, other than name, whose bloom positions share at
// least one with name's (found by trying candidates in turn).
func sharing(t *testing.T, name, prefix string, bits int64) string {
	t.Helper()
	mine := map[int64]bool{}
	for _, off := range redisview.BloomPositions(name, bits, 6) {
		mine[off] = true
	}
	for i := range 5_000_000 {
		y := prefix + strconv.Itoa(i)
		for _, off := range redisview.BloomPositions(y, bits, 6) {
			if mine[off] {
				return y
			}
		}
	}
	t.Fatal("no name shares a bloom position")
	return ""
}

// lastOf is the newest outcome record of kind.
func (f *fixture) lastOf(kind string) Record {
	f.t.Helper()
	var out Record
	for _, r := range f.records() {
		if r.Action == kind && r.Phase == PhaseOutcome {
			out = r
		}
	}
	if out.ID == "" {
		f.t.Fatalf("no outcome record of %s", kind)
	}
	return out
}

// Undoing set-bloom-bits clears only the bits no other member of the set
// needs: a name banned since that shares one of them keeps it (else the
// application's fail-open bloom check would silently ignore its ban), the
// preview says which stay and why, and a member added to the set between
// the read and EXEC refuses the undo.
func TestUndoSetBloomBitsKeepsBitsOthersNeed(t *testing.T) {
	f := banFixture(t, "a", "b")
	xoffs := f.addByHand(handAdded)
	y := sharing(t, handAdded, "shares <i>", banBits)
	f.mustRun(support, KindSetBloomBits, f.req(9, banSet, ArgMember, handAdded))
	f.mustRun(support, KindBan, f.req(9, banSet, ArgName, y))
	if v := f.verdict(y); v.Verdict != bans.Listed {
		t.Fatalf("%q after its ban: %+v", y, v)
	}
	yoffs := map[int64]bool{}
	for _, off := range redisview.BloomPositions(y, banBits, 6) {
		yoffs[off] = true
	}
	undo := UndoRequest(f.lastOf(KindSetBloomBits))
	pv, err := f.r.Preview(f.ctx, admin, f.conn, KindUndo, undo)
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "undo preview", pv.Summary+" "+strings.Join(pv.Notes, " "), quoteKey(y), "stay set")

	// A name added to the set between the read of the set and EXEC,
	// sharing a bit too (its bits all set already, so only the set
	// changes): EXEC fails (the set is watched), and the retry reads it.
	z := sharing(t, handAdded, "late ", banBits)
	for _, off := range redisview.BloomPositions(z, banBits, 6) {
		f.db(9).SetBit(f.ctx, banBloom, off, 1)
	}
	pv, err = f.r.Preview(f.ctx, admin, f.conn, KindUndo, undo)
	if err != nil {
		t.Fatal(err)
	}
	once := false
	f.r.opts.beforeExec = func() {
		if !once {
			once = true
			f.db(9).SAdd(f.ctx, banSet, z)
		}
	}
	defer func() { f.r.opts.beforeExec = nil }()
	if _, err := f.r.Execute(f.ctx, admin, f.conn, pv); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{y, z} {
		if v := f.verdict(n); v.Verdict != bans.Listed {
			t.Fatalf("undoing set-bloom-bits of %q un-banned %q, which shares a bit with it: %+v", handAdded, n, v)
		}
	}
	for _, off := range redisview.BloomPositions(z, banBits, 6) {
		yoffs[off] = true
	}
	if v := f.verdict(handAdded); v.Verdict != bans.Missed {
		t.Fatalf("after the undo %q: %+v", handAdded, v)
	}
	ones := bloomOnes(f.bloomBytes())
	for _, off := range xoffs {
		if got, want := ones[off], yoffs[off]; got != want {
			t.Errorf("offset %d of %q after the undo: set %v, want %v (needed by %q or %q)", off, handAdded, got, want, y, z)
		}
	}
	if rec := f.last(); rec.Action != KindUndo || !strings.Contains(rec.Summary, quoteKey(y)) {
		t.Fatalf("the undo's record does not say which bits stayed: %+v", rec)
	}
}
