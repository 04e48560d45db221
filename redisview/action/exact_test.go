package action

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview/schema"
)

// Two keys whose names differ only in bytes JSON cannot carry: the
// confirmation, the audit record and undo must each act on the one shown.
func TestConfirmActsOnTheExactKeyPreviewed(t *testing.T) {
	f := setup(t, Options{})
	const bad, lookalike = "conf:\xff", "conf:\xEF\xBF\xBD"
	for _, k := range []string{bad, lookalike} {
		f.db(0).Set(f.ctx, k, "same-value", 0)
	}
	pv, err := f.r.Preview(f.ctx, admin, f.conn, "delete-key", f.req(0, bad))
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseToken(pv.Token())
	if err != nil {
		t.Fatal(err)
	}
	if back.Request.Key != bad {
		t.Fatalf("token carried %q, want %q", back.Request.Key, bad)
	}
	out, err := f.r.Execute(f.ctx, admin, f.conn, back)
	if err != nil {
		t.Fatal(err)
	}
	if f.db(0).Exists(f.ctx, bad).Val() != 0 || f.db(0).Exists(f.ctx, lookalike).Val() != 1 {
		t.Fatal("deleted the wrong key")
	}
	for _, r := range f.records() {
		if len(r.Keys) != 1 || r.Keys[0] != bad {
			t.Fatalf("audit keys %q", r.Keys)
		}
		for _, tg := range r.Targets {
			if tg.Key != bad {
				t.Fatalf("audit target %q", tg.Key)
			}
		}
	}
	rec, err := f.r.Audit().Get(f.ctx, out.ID)
	if err != nil {
		t.Fatal(err)
	}
	f.mustRun(admin, "undo", UndoRequest(rec))
	if got := f.db(0).Get(f.ctx, bad).Val(); got != "same-value" {
		t.Fatalf("undo restored %q", got)
	}
}

func TestFingerprintBindsTheKeyName(t *testing.T) {
	r := New(nil, Options{})
	a := State{Key: "conf:\xff", Type: "string", PTTL: -1, dump: []byte("same")}
	b := a
	b.Key = "conf:\uFFFD"
	if r.fingerprint(a) == r.fingerprint(b) {
		t.Fatal("two keys with one value share a fingerprint")
	}
	ma, mb := a, b
	ma.Type, mb.Type = "zset", "zset"
	ma.Member = &MemberState{Name: "m", Present: true, Score: "1"}
	mb.Member = ma.Member
	if r.fingerprint(ma) == r.fingerprint(mb) {
		t.Fatal("one member of two keys shares a fingerprint")
	}
	// Records written before the name was bound still undo.
	r.fingerprints(&a)
	if !a.matches(r.fingerprintV(a, 1)) || a.matches(r.fingerprintV(b, 2)) {
		t.Fatal("legacy fingerprints")
	}
}

func TestExactJSONRoundTrips(t *testing.T) {
	for _, s := range []string{"", "plain", "conf:\xff", "\xEF\xBF\xBD", "a\x00b", `{"b64":"eA=="}`, "<b>é</b>\u2028"} {
		tg := Target{Key: s, Member: &MemberState{Name: s + "m", Present: true, Score: "1"}}
		b, err := json.Marshal(tg)
		if err != nil {
			t.Fatal(err)
		}
		var back Target
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if back.Key != s || back.Member.Name != s+"m" || back.Member.Score != "1" {
			t.Fatalf("%q came back as %q / %q (%s)", s, back.Key, back.Member.Name, b)
		}
	}
}

// A confirmation executes at most once, on every replica: after an undo
// restored the very state it fingerprinted, a replayed confirmation must
// not delete the key again.
func TestConfirmationRunsOnce(t *testing.T) {
	f := setup(t, Options{})
	f.db(0).Set(f.ctx, "k", "v", 0)
	pv, err := f.r.Preview(f.ctx, admin, f.conn, "delete-key", f.req(0, "k"))
	if err != nil {
		t.Fatal(err)
	}
	token := pv.Token()
	replay := func(r *Runner) error {
		again, err := ParseToken(token)
		if err != nil {
			t.Fatal(err)
		}
		_, err = r.Execute(f.ctx, admin, f.conn, again)
		return err
	}
	if err := replay(f.r); err != nil {
		t.Fatal(err)
	}
	rec := f.last()
	f.mustRun(admin, "undo", UndoRequest(rec))
	other := New(f.audit, Options{}) // another replica, same audit server
	for _, r := range []*Runner{f.r, other} {
		wantErr(t, replay(r), ErrInvalid, "already used")
	}
	if f.db(0).Get(f.ctx, "k").Val() != "v" {
		t.Fatal("a replayed confirmation deleted the key again")
	}
	if last := f.last(); last.Outcome != OutcomeRefused || !strings.Contains(last.Error, "already used") {
		t.Fatalf("replay not recorded as refused: %+v", last)
	}
}

// MEMORY USAGE's default estimate samples five elements: a list of a few
// small and some huge elements passes it. The decision to DUMP rests on
// exact sizes, so the huge list is refused before any DUMP runs.
func TestPreviewNeverDumpsWhatSamplingUnderestimates(t *testing.T) {
	f := setup(t, Options{})
	c := f.db(0)
	for range 5 {
		c.RPush(f.ctx, "biglist", strings.Repeat("s", 9<<10))
	}
	for range 3 {
		c.RPush(f.ctx, "biglist", strings.Repeat("B", 2<<20))
	}
	c.Set(f.ctx, "bigstring", strings.Repeat("x", 5<<20), 0)
	if est := c.MemoryUsage(f.ctx, "biglist").Val(); est > 4<<20 {
		t.Fatalf("the sampled estimate (%d) no longer underestimates; the test needs another shape", est)
	}
	before, err := f.target.CommandCalls(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"biglist", "bigstring"} {
		_, err := f.r.Preview(f.ctx, admin, f.conn, "delete-key", f.req(0, k))
		wantErr(t, err, ErrInvalid, "could not be undone")
	}
	after, err := f.target.CommandCalls(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if after["dump"] != before["dump"] || after["getrange"] != before["getrange"] {
		t.Fatalf("values were read: dump %d→%d", before["dump"], after["dump"])
	}
	// Small aggregates are still measured exactly and acted on.
	c.RPush(f.ctx, "small", "a", "b")
	f.mustRun(admin, "delete-key", f.req(0, "small"))
}

// sensitivePack is the eIsland pack with its leaderboards marked sensitive.
func sensitivePack(t *testing.T) *schema.Pack {
	t.Helper()
	raw, err := os.ReadFile("../schema/packs/eisland.yaml")
	if err != nil {
		t.Fatal(err)
	}
	y := strings.Replace(string(raw), "    role: leaderboard\n", "    role: leaderboard\n    sensitive: true\n", 1)
	p, err := schema.Load("eisland", []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// On a sensitive board the member and its score are data: neither the
// preview, nor the audit record (read by viewers on /audit), nor an error
// may carry the score, and the record withholds the member.
func TestSensitiveBoardEntryNeverRecorded(t *testing.T) {
	f := setup(t, Options{})
	f.conn.ForcePack(sensitivePack(t))
	const member, score = "secret-player", 987654321
	f.seedEntry(member, score)
	pv, err := f.r.Preview(f.ctx, support, f.conn, lbKind, f.req(lbDB, lbBoard, "member", member))
	if err != nil {
		t.Fatal(err)
	}
	if pv.Undoable || strings.Contains(pv.Summary, "987654321") || strings.Contains(pv.Summary, "9.87654321e+08") || strings.Contains(pv.Summary, `"`+member+`"`) {
		t.Fatalf("preview shows the entry: %+v", pv)
	}
	if _, err := f.r.Execute(f.ctx, support, f.conn, pv); err != nil {
		t.Fatal(err)
	}
	// Neither the companions' values, nor the member's args, nor its score
	// (the companions' names, built from the member, are withheld too: see
	// TestSensitiveMemberNotShownThroughCompanionNames).
	for _, m := range f.raw() {
		js, _ := json.Marshal(m.Values)
		if strings.Contains(string(js), "987654321") || strings.Contains(string(js), "9.87654321e+08") {
			t.Fatalf("audit record carries the score: %s", js)
		}
	}
	for _, r := range f.records() {
		if r.Args["member"] != PriorSensitive {
			t.Fatalf("audit args %q", r.Args)
		}
		for _, tg := range r.Targets {
			if tg.Member != nil || (tg.Prior != "" && tg.Prior != PriorSensitive) || tg.Before != "" || tg.After != "" {
				t.Fatalf("audit target %+v", tg)
			}
		}
	}
}

// Set-TTL on a sensitive key records the type and the TTL it left, never
// the value, and never a made-up "absent".
func TestSensitiveOutcomeRecordsTypeAndTTL(t *testing.T) {
	f := setup(t, Options{})
	f.conn.ForcePack(schema.BuiltinPack("eisland"))
	const key = "totp:security:secret:plain:alice"
	f.db(5).Set(f.ctx, key, "JBSWY3DPEHPK3PXP", time.Minute)
	f.mustRun(admin, "set-ttl", f.req(5, key, "ttl", "10m"))
	out := f.last()
	if len(out.Targets) != 1 {
		t.Fatalf("targets %+v", out.Targets)
	}
	tg := out.Targets[0]
	if tg.Type != "string" || tg.PTTL < 9*60*1000 || tg.PTTL > 10*60*1000 || tg.After != "" || tg.Prior != "" {
		t.Fatalf("outcome target %+v", tg)
	}
}

var _ = redis.Nil
