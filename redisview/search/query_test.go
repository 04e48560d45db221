package search

import (
	"encoding/base64"
	"slices"
	"strings"
	"testing"

	"github.com/keydeck/keydeck/redisview/schema"
)

func eisland(t *testing.T) *schema.Pack {
	t.Helper()
	p := schema.BuiltinPack("eisland")
	if p == nil {
		t.Fatal("no eisland pack")
	}
	return p
}

func TestParse(t *testing.T) {
	pack := eisland(t)
	for _, tc := range []struct {
		q         string
		kind      Kind
		name, val string
		familyID  string
	}{
		{"", Empty, "", "", ""},
		{"   ", Empty, "", "", ""},
		{"verify:slider:*", Glob, "", "", ""},
		{"user?", Glob, "", "", ""},
		{"a[bc]", Glob, "", "", ""},
		{`a\*b`, Value, "", "a*b", ""},                // escaped: a value with a star
		{`DOMAIN\user`, Value, "", `DOMAIN\user`, ""}, // a backslash of the value's own
		{"slider-fail-account", Family, "", "", "slider-fail-account"},
		{"Zoë:ops/β", Value, "", "Zoë:ops/β", ""},
		{"username=alice", Value, "username", "alice", ""},
		{"ip=10.0.0.1", Value, "ip", "10.0.0.1", ""},
		{"nosuchname=alice", Value, "", "nosuchname=alice", ""}, // not a placeholder: the whole value
		{"a=b=c", Value, "", "a=b=c", ""},
	} {
		got := Parse(tc.q, pack)
		if got.Kind != tc.kind || got.Name != tc.name || got.Value != tc.val {
			t.Errorf("Parse(%q) = %s name %q value %q, want %s %q %q", tc.q, got.Kind, got.Name, got.Value, tc.kind, tc.name, tc.val)
		}
		if tc.familyID != "" && (got.Family == nil || got.Family.ID != tc.familyID) {
			t.Errorf("Parse(%q): family %v, want %s", tc.q, got.Family, tc.familyID)
		}
	}
	// Without a pack a family id is only a value.
	if got := Parse("slider-fail-account", nil); got.Kind != Value {
		t.Errorf("no pack: %s", got.Kind)
	}
}

func TestValueKinds(t *testing.T) {
	for _, tc := range []struct{ v, want string }{
		{"10.0.0.1", "ip"},
		{"2001:db8::1", "ip"},
		{"zoe@example.com", "email,user"},
		{"alice", "user,keyId"},
		{"ops:admin", "user,keyId"},
		{"a@b", "user,keyId"}, // no dot after @: not an address
	} {
		if got := strings.Join(ValueKinds(tc.v), ","); got != tc.want {
			t.Errorf("ValueKinds(%q) = %s, want %s", tc.v, got, tc.want)
		}
	}
}

func probesOf(p Plan, db int) map[string]string {
	out := map[string]string{}
	for _, pr := range p.Probes {
		if pr.DB == db {
			out[pr.Family.ID] = pr.Key
		}
	}
	return out
}

// allProbesOf: every key derived in db, by family.
func allProbesOf(p Plan, db int) map[string][]string {
	out := map[string][]string{}
	for _, pr := range p.Probes {
		if pr.DB == db {
			out[pr.Family.ID] = append(out[pr.Family.ID], pr.Key)
		}
	}
	return out
}

// Equal encodings are derived once: a name whose base64 has no padding
// and no + or / is one key, one with padding alone or +/ alone two.
func TestPlanDropsEqualEncodings(t *testing.T) {
	for _, tc := range []struct {
		acct string
		want []string
	}{
		{"ops:admin", []string{"b3BzOmFkbWlu"}},
		{"张三:vip", []string{"5byg5LiJOnZpcA==", "5byg5LiJOnZpcA"}},
		{"韩梅梅", []string{"6Z+p5qKF5qKF", "6Z-p5qKF5qKF"}},
		{"🦊fox", []string{"8J+mimZveA==", "8J+mimZveA", "8J-mimZveA==", "8J-mimZveA"}},
	} {
		got := allProbesOf(PlanValue(eisland(t), "account", tc.acct, allDBs), 4)["slider-fail-account"]
		var want []string
		for _, e := range tc.want {
			want = append(want, "verify:slider:fail:account:"+e)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: %q, want %q", tc.acct, got, want)
		}
	}
}

// A family the value fills only partly, in a base64 placeholder: one
// scan per database whose MATCH holds every encoding, and a glob per
// encoding that holds it exactly.
func TestPlanScanEveryBase64Encoding(t *testing.T) {
	p, err := schema.Load("t.yaml", []byte(`name: t
families:
  - id: f
    db: 0
    pattern: "x:{account:base64}:{n:digits}"
    type: string
    ttl: any
    domain: T
    role: cache
  - id: g
    db: 0
    pattern: "y:{account:base64}:{n:digits}"
    type: string
    ttl: any
    domain: T
    role: cache
`))
	if err != nil {
		t.Fatal(err)
	}
	plan := PlanValue(p, "account", "Zoë:ops/β", []int{0})
	if len(plan.Scans) != 1 || len(plan.Probes) != 0 {
		t.Fatalf("%+v", plan)
	}
	s := plan.Scans[0]
	if s.Match != `*Wm[\/\_]DqzpvcHMvzrI*` || len(s.Globs) != 8 {
		t.Fatalf("match %q, globs %q", s.Match, s.Globs)
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		for _, pre := range []string{"x:", "y:"} {
			key := pre + enc.EncodeToString([]byte("Zoë:ops/β")) + ":7"
			n := 0
			for i, g := range s.Globs {
				if GlobMatch(g, key) {
					n++
					if s.Families[i].ID != map[string]string{"x:": "f", "y:": "g"}[pre] {
						t.Errorf("%s matches %s's glob %q", key, s.Families[i].ID, g)
					}
				}
			}
			if n != 1 || !GlobMatch(s.Match, key) {
				t.Errorf("%s: %d globs, match %v", key, n, GlobMatch(s.Match, key))
			}
		}
	}
	// A longer name is not this one.
	if key := "x:" + base64.StdEncoding.EncodeToString([]byte("Zoë:ops/βx")) + ":7"; slices.ContainsFunc(s.Globs, func(g string) bool { return GlobMatch(g, key) }) {
		t.Errorf("%s matched", key)
	}
}

func scansOf(p Plan, db int) []Scan {
	var out []Scan
	for _, s := range p.Scans {
		if s.DB == db {
			out = append(out, s)
		}
	}
	return out
}

var allDBs = []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}

// An account name derives its slider keys in db4 in every base64
// encoding (the seed names none; Java's default is standard and padded),
// and its base64 forms do not need a scan.
func TestPlanAccountDerivesSliderKeys(t *testing.T) {
	acct := "Zoë:ops/β"
	p := PlanValue(eisland(t), "", acct, allDBs)
	got := allProbesOf(p, 4)
	for _, fam := range []string{"slider-account-challenges", "slider-rate-create-account", "slider-fail-account"} {
		prefix := eisland(t).Family(fam).Pattern.LiteralPrefix()
		var want []string
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
			want = append(want, prefix+enc.EncodeToString([]byte(acct)))
		}
		if !slices.Equal(got[fam], want) {
			t.Errorf("%s: derived %q, want %q", fam, got[fam], want)
		}
	}
	if s := scansOf(p, 4); len(s) != 0 {
		t.Errorf("db4 needs no scan for an account, got %+v", s)
	}
	// A probe is only in the family's own database.
	for _, pr := range p.Probes {
		if !pr.Family.InDB(pr.DB) {
			t.Errorf("probe %s in db%d", pr.Family.ID, pr.DB)
		}
	}
	// Only databases with keys are read.
	if p := PlanValue(eisland(t), "", acct, []int{6}); len(probesOf(p, 4)) != 0 || p.Absent == 0 {
		t.Errorf("db4 has no keys: probes %v absent %d", probesOf(p, 4), p.Absent)
	}
}

// A username fills the username of two-placeholder families and leaves
// the others free: a scan with the value filled in and glob-escaped.
func TestPlanUsernameScans(t *testing.T) {
	p := PlanValue(eisland(t), "", "ali*ce", allDBs)
	if got := probesOf(p, 6)["login-failures"]; got != "auth:limit:login:failures:ali*ce" {
		t.Errorf("login failures derived %q", got)
	}
	s8 := scansOf(p, 8)
	if len(s8) != 1 || s8[0].Match != `issue-feedback:submit:ali\*ce:*` {
		t.Fatalf("db8 scans %+v", s8)
	}
	s5 := scansOf(p, 5)
	if len(s5) != 1 || s5[0].Match != `totp:security:replay:ali\*ce:*:*` {
		t.Fatalf("db5 scans %+v", s5)
	}
	// The mini-game families of one database share one cursor: their
	// common start, then the value.
	var mg []Scan
	for _, s := range p.Scans {
		if strings.HasPrefix(s.Match, "mg:") {
			mg = append(mg, s)
		}
	}
	if len(mg) != 1 || mg[0].Match != `mg:score:*ali\*ce*` || len(mg[0].Families) < 5 {
		t.Fatalf("mini-game scans %+v", mg)
	}
	for i, g := range mg[0].Globs {
		if !GlobMatch(mg[0].Match, strings.ReplaceAll(strings.ReplaceAll(strings.ReplaceAll(g, `\*`, "\x00"), "*", "x"), "\x00", "*")) {
			t.Errorf("merged glob misses %s's keys (%s)", mg[0].Families[i].ID, g)
		}
	}
}

// Classes keep a value away from placeholders that cannot hold it, and
// name= restricts to one placeholder name.
func TestPlanClassesAndName(t *testing.T) {
	pack := eisland(t)
	spaced := PlanValue(pack, "", "john smith", allDBs)
	for _, pr := range spaced.Probes {
		for _, ph := range pr.Family.Pattern.Placeholders() {
			if ph.Class == schema.ClassDigits || ph.Class == schema.ClassSegment && strings.Contains(pr.Key, ":john") {
				t.Errorf("%s: a value with a space fills {%s}", pr.Family.ID, ph)
			}
		}
	}
	if spaced.Skipped == 0 {
		t.Error("no family skipped for a value with a space")
	}
	digits := PlanValue(pack, "", "202611", allDBs)
	if got := probesOf(digits, 12)["qweather-quota"]; got == "" {
		// the quota's {YYYYMM:digits6} takes six digits
		found := false
		for _, pr := range digits.Probes {
			found = found || strings.HasSuffix(pr.Key, ":202611") && strings.Contains(pr.Key, "quota")
		}
		if !found {
			t.Errorf("six digits fill no quota month: %+v", digits.Probes)
		}
	}
	for _, pr := range PlanValue(pack, "", "20261", allDBs).Probes {
		if strings.Contains(pr.Key, "quota") {
			t.Errorf("five digits fill a digits6 placeholder: %s", pr.Key)
		}
	}
	named := PlanValue(pack, "ip", "10.0.0.1", allDBs)
	for _, pr := range named.Probes {
		if _, ok := phNamed(pr.Family, "ip"); !ok {
			t.Errorf("ip= probes %s", pr.Family.ID)
		}
	}
	if len(probesOf(named, 4)) != 4 { // challenges, create, verify and fail per IP, base64
		t.Errorf("ip= in db4: %v", probesOf(named, 4))
	}
	for _, s := range named.Scans {
		if s.DB == 8 && s.Match != "issue-feedback:submit:*:10.0.0.1" {
			t.Errorf("ip= feedback scan %q", s.Match)
		}
	}
}

func phNamed(f *schema.Family, name string) (schema.Placeholder, bool) {
	for _, ph := range f.Pattern.Placeholders() {
		if strings.EqualFold(ph.Name, name) {
			return ph, true
		}
	}
	return schema.Placeholder{}, false
}

func TestPlanGlob(t *testing.T) {
	p := PlanGlob("verify:*", []int{0, 4})
	if len(p.Scans) != 2 || p.Scans[1].ID != "4.0" || p.Scans[1].Match != "verify:*" || p.Scans[1].Families != nil {
		t.Fatalf("%+v", p.Scans)
	}
}

func TestGlobMatch(t *testing.T) {
	for _, tc := range []struct {
		glob, s string
		want    bool
	}{
		{"*", "", true},
		{"a*", "abc", true},
		{"a*c", "abbbc", true},
		{"a*c", "abbbd", false},
		{"a?c", "abc", true},
		{"a?c", "ac", false},
		{"[abc]x", "bx", true},
		{"[^abc]x", "bx", false},
		{"[a-c]x", "cx", true},
		{"[a-c]x", "dx", false},
		{`a\*b`, "a*b", true},
		{`a\*b`, "axb", false},
		{"*:*:*", "a:b:c", true},
		{"*:*:*", "a:b", false},
		{"verify:slider:*", "verify:slider:fail:x", true},
	} {
		if got := GlobMatch(tc.glob, tc.s); got != tc.want {
			t.Errorf("GlobMatch(%q, %q) = %v", tc.glob, tc.s, got)
		}
	}
	// Linear: a long key against many stars does not blow up.
	long := strings.Repeat("a", 1<<16)
	if GlobMatch("*a*a*a*b", long) {
		t.Error("long key matched")
	}
	for _, s := range []string{"a*b?c[d]e\\f", "plain", "\xff\x00"} {
		if !GlobMatch(schema.EscapeGlob(s), s) || GlobMatch(schema.EscapeGlob(s), s+"x") {
			t.Errorf("schema.EscapeGlob(%q) does not match only itself", s)
		}
	}
}

func TestCursors(t *testing.T) {
	r := Result{Scans: []ScanState{
		{Scan: Scan{ID: "4.0"}, Cursor: "123"},
		{Scan: Scan{ID: "5.0"}, Done: true},
		{Scan: Scan{ID: "8.1"}, Cursor: ""},
	}}
	s := r.Cursors()
	if s != "4.0:123,8.1:0" {
		t.Fatalf("Cursors %q", s)
	}
	m, err := ParseCursors(s)
	if err != nil || len(m) != 2 || m["4.0"] != "123" || m["8.1"] != "" {
		t.Fatalf("ParseCursors %v %v", m, err)
	}
	cl := Result{Scans: []ScanState{{Scan: Scan{ID: "0.0"}, Cursor: "s0:12,s5461:0"}}}
	if s := cl.Cursors(); s != "0.0:s0:12_s5461:0" {
		t.Fatalf("a cluster's Cursors %q", s)
	}
	if m, err := ParseCursors("0.0:s0:12_s5461:0"); err != nil || m["0.0"] != "s0:12,s5461:0" {
		t.Fatalf("ParseCursors of a cluster's %v %v", m, err)
	}
	if _, err := ParseCursors("0.0:s0:12_sx:1"); err == nil {
		t.Fatal("a malformed cluster cursor parsed")
	}
	if m, err := ParseCursors(""); m != nil || err != nil {
		t.Fatal("empty is the first request")
	}
	for _, bad := range []string{"x", "4.0", "4:1", "a.0:1", "4.0:-1", "4.0:1,", "123456.0:1"} {
		if _, err := ParseCursors(bad); err == nil {
			t.Errorf("ParseCursors(%q) accepted", bad)
		}
	}
}

func TestGlobOfLiteralBraces(t *testing.T) {
	p, err := schema.Load("t.yaml", []byte(`name: t
families:
  - id: f
    db: 0
    pattern: "a{{*}}:{user}:{n:digits}"
    type: string
    ttl: any
    domain: T
    role: cache
`))
	if err != nil {
		t.Fatal(err)
	}
	plan := PlanValue(p, "user", "bob", []int{0})
	if len(plan.Scans) != 1 || plan.Scans[0].Match != `a{\*}:bob:*` {
		t.Fatalf("%+v", plan.Scans)
	}
}
