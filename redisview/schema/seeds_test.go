package schema

import (
	"bufio"
	"encoding/base64"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

type seedRow struct {
	pack    string
	db      int // -1: any
	role    Role
	pattern string // verbatim from the seed
}

func readSeedFixture(t *testing.T) []seedRow {
	t.Helper()
	f, err := os.Open("testdata/seed_keys.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []seedRow
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if sc.Text() == "" || strings.HasPrefix(sc.Text(), "#") {
			continue
		}
		c := strings.Split(sc.Text(), "\t")
		if len(c) != 4 {
			t.Fatalf("fixture line %q", sc.Text())
		}
		db := -1
		if c[1] != "*" {
			db, _ = strconv.Atoi(c[1])
		}
		rows = append(rows, seedRow{c[0], db, Role(c[2]), c[3]})
	}
	return rows
}

// seedShape erases the seed's placeholders ({name}, {base64(x)}, {...},
// <name>) the way Pattern.shape erases the pack's.
var seedPlaceholder = regexp.MustCompile(`\{[^}]*\}|<[^>]*>`)

func seedShape(pattern string) string { return seedPlaceholder.ReplaceAllString(pattern, "\x00{}") }

// awkward values per class: separators, unicode, spaces, HTML.
var awkward = map[Class][]string{
	ClassAny:     {"ops:admin", "李雷", "john smith", xss, "a::b:", "ünï 🎉 :x", "x"},
	ClassSegment: {"李雷", "john smith", "<b>x</b>", "cn-sh", "x"},
	ClassUpper:   {"RESET_PASSWORD", "POST", "A"},
	ClassDigits:  {"2048", "0", "202607"},
	ClassAlnum:   {"abc123", "Z"},
}

func awkwardValue(ph Placeholder, variant int) string {
	if ph.Len > 0 {
		alphabet := map[Class]string{ClassHex: "0123456789abcdef", ClassDigits: "0123456789"}[ph.Class]
		if alphabet == "" {
			alphabet = "abcdefgh"
		}
		var b strings.Builder
		for i := range ph.Len {
			b.WriteByte(alphabet[(i+variant)%len(alphabet)])
		}
		return b.String()
	}
	if ph.Class.Decodes() {
		vs := awkward[ClassAny]
		return vs[variant%len(vs)]
	}
	vs := awkward[ph.Class]
	if vs == nil {
		vs = []string{"0a1b"}
	}
	return vs[variant%len(vs)]
}

// TestSeedPatterns takes every key pattern of the seed documents, finds
// the family with that shape in the right pack and database, checks its
// role, and classifies keys built from it with awkward placeholder values.
func TestSeedPatterns(t *testing.T) {
	rows := readSeedFixture(t)
	if len(rows) != 84+7+1 {
		t.Fatalf("fixture has %d patterns, want 92", len(rows))
	}
	used := map[*Family]bool{}
	for _, r := range rows {
		p := BuiltinPack(r.pack)
		var f *Family
		for _, g := range p.Families {
			if g.Pattern.shape() == seedShape(r.pattern) && (r.db < 0 && g.DBs == nil || r.db >= 0 && slices.Equal(g.DBs, []int{r.db})) {
				f = g
			}
		}
		if r.pack == "vertique" {
			f = p.Family("bucket")
		}
		if f == nil {
			t.Errorf("seed pattern %s (db %d) has no family in pack %s", r.pattern, r.db, r.pack)
			continue
		}
		used[f] = true
		if f.Role != r.role {
			t.Errorf("%s: role %s, want %s", r.pattern, f.Role, r.role)
		}
		// Where the seed says base64(x) and no more, the pack must not
		// pin a variant: the application may write any of them. (The
		// vertique family takes its namespace from a parameter: the seed's
		// placeholders are not its own.)
		sps := seedPlaceholder.FindAllString(r.pattern, -1)
		for i, sp := range sps {
			if len(sps) != len(f.Pattern.phs) {
				break
			}
			b64 := strings.HasPrefix(sp, "{base64(")
			if ph := f.Pattern.phs[i]; b64 && ph.Class != ClassBase64 || !b64 && ph.Class.Decodes() {
				t.Errorf("%s: placeholder %s is {%s:%s} in family %s", r.pattern, sp, ph.Name, ph.Class, f.ID)
			}
		}
		c := p.Classifier()
		db := max(r.db, 0)
		for variant := range 7 {
			vals := map[string]string{}
			for _, ph := range f.Pattern.phs {
				vals[ph.Name] = awkwardValue(ph, variant)
			}
			key, err := f.Key(vals)
			if err != nil {
				t.Fatalf("%s: %v", r.pattern, err)
			}
			m, ok := c.Match(db, key)
			if !ok || m.Family != f {
				t.Errorf("%s: key %q classified as %v, want %s", r.pattern, key, m.Family, f.ID)
				continue
			}
			if back, _ := f.Key(m.Map()); back != key {
				t.Errorf("%q: values %v rebuild %q", key, m.Map(), back)
			}
			anyCount := 0
			for _, ph := range f.Pattern.phs {
				if ph.Class == ClassAny {
					anyCount++
				}
			}
			if anyCount <= 1 {
				for name, want := range vals {
					if got, _ := m.Get(name); got != want {
						t.Errorf("%q: {%s} = %q, want %q", key, name, got, want)
					}
				}
			}
			if r.db >= 0 {
				other := (r.db + 1) % 15
				if g, ok := c.Classify(other, key); ok && g == f {
					t.Errorf("%q matched %s in db %d too", key, f.ID, other)
				}
			}
		}
		if r.pack == "eisland" {
			if _, ok := c.Classify(15, strings.ReplaceAll(seedPlaceholder.ReplaceAllString(r.pattern, "x"), "\x00", "")); ok {
				t.Errorf("%s matched in db 15", r.pattern)
			}
		}
	}
	for _, p := range Builtin() {
		for _, f := range p.Families {
			if !used[f] {
				t.Errorf("%s family %s corresponds to no seed pattern", p.Name, f.ID)
			}
		}
	}
}

// TestSeedFixtureInSync re-extracts the key patterns from the seed
// documents, when they are reachable, so the fixture cannot drift from them.
//
// The documents live outside the repository: KEYDECK_SEEDS names their
// folder (`make test` sets it when ../shared/seeds exists beside the
// checkout), else ../shared/seeds beside the checkout is tried. Named by
// KEYDECK_SEEDS, or with KEYDECK_REQUIRE_SEEDS=1 (CI: .ci/run), documents
// that cannot be read fail the test; otherwise it skips, saying how to run it.
func TestSeedFixtureInSync(t *testing.T) {
	dir := os.Getenv("KEYDECK_SEEDS")
	required := dir != "" || os.Getenv("KEYDECK_REQUIRE_SEEDS") == "1"
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "shared", "seeds")
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			if required {
				t.Fatalf("seed documents required but not readable (%v): KEYDECK_SEEDS=%q, KEYDECK_REQUIRE_SEEDS=%q; put them at ../shared/seeds beside the checkout or point KEYDECK_SEEDS at their folder",
					err, os.Getenv("KEYDECK_SEEDS"), os.Getenv("KEYDECK_REQUIRE_SEEDS"))
			}
			t.Skipf("seed documents not found (%v): to run this test, put the three seed documents at ../shared/seeds beside the checkout (make test then finds them) or run KEYDECK_SEEDS=/path/to/seeds go test ./redisview/schema -run TestSeedFixtureInSync", err)
		}
		return string(b)
	}
	eisland, gateway, vertique := read("000_f3a0dbfe758eabc7.txt"), read("003_17df6fabf4e1cc90.txt"), read("002_6516ebc641ceb812.txt")

	var want []string
	db := ""
	heading := regexp.MustCompile(`^DB (\d+) — `)
	tick := regexp.MustCompile("`([^`]*)`")
	for _, line := range strings.Split(eisland, "\n") {
		if m := heading.FindStringSubmatch(line); m != nil {
			db = m[1]
		}
		if strings.HasPrefix(line, "Bloom Filter Implementation") {
			break // summary tables after DB 14 repeat patterns without new ones
		}
		if db == "" {
			continue
		}
		for _, m := range tick.FindAllStringSubmatch(line, -1) {
			k := m[1]
			if strings.Contains(k, ":") && !strings.ContainsAny(k, " *") && !strings.HasSuffix(k, ":") {
				want = append(want, "eisland\t"+db+"\t"+k)
			}
		}
	}
	row := regexp.MustCompile(`(?m)^([a-z]+:[^ |]+) \|$`)
	for _, m := range row.FindAllStringSubmatch(gateway, -1) {
		want = append(want, "gateway\t*\t"+m[1])
	}
	if !strings.Contains(vertique, "<namespace>:v1:<keyFingerprint>:<HMAC-SHA-256 hex>") {
		t.Error("seed 002 no longer names <namespace>:v1:<keyFingerprint>:<HMAC-SHA-256 hex>")
	}
	want = append(want, "vertique\t*\t<namespace>:v1:<keyFingerprint>:<HMAC-SHA-256 hex>")

	var got []string
	for _, r := range readSeedFixture(t) {
		d := "*"
		if r.db >= 0 {
			d = strconv.Itoa(r.db)
		}
		got = append(got, r.pack+"\t"+d+"\t"+r.pattern)
	}
	slices.Sort(got)
	slices.Sort(want)
	want = slices.Compact(want)
	if !slices.Equal(got, want) {
		for _, w := range want {
			if !slices.Contains(got, w) {
				t.Errorf("seed pattern missing from fixture: %q", w)
			}
		}
		for _, g := range got {
			if !slices.Contains(want, g) {
				t.Errorf("fixture pattern not in the seeds: %q", g)
			}
		}
	}
}

// The slider keys carry base64(account); the seed does not say which
// alphabet, so both must classify and decode.
func TestBase64Variants(t *testing.T) {
	c := BuiltinPack("eisland").Classifier()
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		acct := "ops:admin??>>~" // bytes that differ between the alphabets
		key := "verify:slider:rate:create:account:" + enc.EncodeToString([]byte(acct))
		m, ok := c.Match(4, key)
		if !ok {
			t.Errorf("%q: no match", key)
			continue
		}
		if v := m.Vars[0]; v.Value != acct || !v.Decoded {
			t.Errorf("%q: %+v", key, v)
		}
	}
	m, _ := c.Match(4, "verify:slider:rate:create:account:notbase64")
	if v := m.Vars[0]; v.Decoded || v.Value != "notbase64" {
		t.Errorf("undecodable: %+v", v)
	}
}
