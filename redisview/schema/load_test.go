package schema

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func mustLoad(t *testing.T, name, src string) *Pack {
	t.Helper()
	p, err := Load(name, []byte(strings.TrimLeft(src, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// family renders one family line for malformed-pack cases.
const okFamily = `  - {id: ok, db: 0, pattern: "ok:{x}", type: string, ttl: any, domain: d, role: cache}`

func TestLoadErrors(t *testing.T) {
	cases := []struct {
		name string
		src  string
		want string // exact "file:line: message" prefix
	}{
		{"unknown role", `
name: x
families:
  - id: fam
    pattern: "a:{b}"
    type: hash
    ttl: required
    domain: d
    role: tokenbucket
`, `bad.yaml:8: family "fam": unknown role "tokenbucket" (known: balance, bloom, bloom-members, breaker-hint, bucket4j, cache,`},
		{"duplicate id", `
name: x
families:
` + okFamily + `
` + okFamily + `
`, `bad.yaml:4: family "ok": duplicate id (first declared at line 3)`},
		{"unclosed brace", `
name: x
families:
  - id: fam
    pattern: "a:{b"
    type: string
    ttl: any
    domain: d
    role: cache
`, `bad.yaml:4: family "fam": pattern "a:{b": unclosed "{" at byte 3`},
		{"stray brace", `
name: x
families:
  - {id: fam, pattern: "a:b}", type: string, ttl: any, domain: d, role: cache}
`, `bad.yaml:3: family "fam": pattern "a:b}": unmatched "}" at byte 4 (write }} for a literal brace)`},
		{"adjacent placeholders", `
name: x
families:
  - {id: fam, pattern: "a:{b}{c}", type: string, ttl: any, domain: d, role: cache}
`, `bad.yaml:3: family "fam": pattern "a:{b}{c}": placeholders {b} and {c} touch`},
		{"no literal", `
name: x
families:
  - {id: fam, pattern: "{b}", type: string, ttl: any, domain: d, role: cache}
`, `bad.yaml:3: family "fam": pattern "{b}": no literal text`},
		{"unknown class", `
name: x
families:
  - {id: fam, pattern: "a:{b:hexx}", type: string, ttl: any, domain: d, role: cache}
`, `bad.yaml:3: family "fam": pattern "a:{b:hexx}": placeholder at byte 3: {b}: unknown class "hexx"`},
		{"duplicate placeholder", `
name: x
families:
  - {id: fam, pattern: "a:{b}:{b}", type: string, ttl: any, domain: d, role: cache}
`, `bad.yaml:3: family "fam": pattern "a:{b}:{b}": placeholder {b} appears twice`},
		{"unknown pack parameter", `
name: x
families:
  - {id: fam, pattern: "${ns}:{b}", type: string, ttl: any, domain: d, role: cache}
`, `bad.yaml:3: family "fam": pattern "${ns}:{b}": unknown pack parameter "ns" at byte 1 (declared: none)`},
		{"ttl min above max", `
name: x
families:
  - id: fam
    pattern: "a:{b}"
    type: string
    ttl:
      min: 15s
      max: 10s
    domain: d
    role: cache
`, `bad.yaml:7: family "fam": ttl: min 15s is above max 10s`},
		{"ttl word", `
name: x
families:
  - {id: fam, pattern: "a:{b}", type: string, ttl: sometimes, domain: d, role: cache}
`, `bad.yaml:3: family "fam": ttl: want required, none, any, or a range {min: 1s, max: 5m}, not "sometimes"`},
		{"ttl missing", `
name: x
families:
  - {id: fam, pattern: "a:{b}", type: string, domain: d, role: cache}
`, `bad.yaml:3: family "fam": ttl is required`},
		{"bad duration", `
name: x
families:
  - id: fam
    pattern: "a:{b}"
    type: string
    ttl:
      max: 5 minutes
    domain: d
    role: cache
`, `bad.yaml:7: family "fam": ttl: bad duration "5 minutes"`},
		{"duration without unit", `
name: x
families:
  - id: fam
    pattern: "a:{b}"
    type: string
    ttl: required
    domain: d
    role: counter-window
    params:
      limit: 3
      window: 60
`, `bad.yaml:11: family "fam": params: duration 60 needs a unit`},
		{"db out of range", `
name: x
families:
  - {id: fam, db: 70000, pattern: "a:{b}", type: string, ttl: any, domain: d, role: cache}
`, `bad.yaml:3: family "fam": db: want a database number 0..65535`},
		{"db not a number", `
name: x
families:
  - id: fam
    db: [1, two]
    pattern: "a:{b}"
    type: string
    ttl: any
    domain: d
    role: cache
`, `bad.yaml:4: family "fam": db: want a database number`},
		{"unknown family field", `
name: x
families:
  - id: fam
    pattern: "a:{b}"
    type: string
    tll: any
    domain: d
    role: cache
`, `bad.yaml:6: family "fam": unknown field "tll" (known: id, title, db, pattern, type, ttl, domain, role, params, sensitive, danger, description)`},
		{"unknown param", `
name: x
families:
  - id: fam
    pattern: "a:{b}"
    type: hash
    ttl: required
    domain: d
    role: token-bucket
    params:
      capacty: 12
`, `bad.yaml:10: family "fam": params: unknown field "capacty" (known: capacity, window,`},
		{"param of wrong type", `
name: x
families:
  - id: fam
    pattern: "a:{b}"
    type: string
    ttl: required
    domain: d
    role: counter-window
    params:
      limit: lots
      window: 1m
`, `bad.yaml:10: family "fam": params: bad value "lots": want an integer`},
		{"missing required param", `
name: x
families:
  - id: fam
    pattern: "a:{b}"
    type: hash
    ttl: required
    domain: d
    role: token-bucket
    params:
      window: 60s
`, `bad.yaml:10: family "fam": params: capacity is required and must be positive`},
		{"refill disagrees", `
name: x
families:
  - id: fam
    pattern: "a:{b}"
    type: hash
    ttl: required
    domain: d
    role: token-bucket
    params: {capacity: 12, window: 60s, refill_per_ms: 0.002}
`, `bad.yaml:9: family "fam": params: refill 0.002/ms disagrees with capacity/window = 0.0002/ms`},
		{"params on a role without", `
name: x
families:
  - id: fam
    pattern: "a:{b}"
    type: string
    ttl: any
    domain: d
    role: cache
    params: {size: 3}
`, `bad.yaml:9: family "fam": role cache takes no params`},
		{"bitmap type", `
name: x
families:
  - {id: fam, pattern: "a:bloom", type: bitmap, ttl: none, domain: d, role: bloom, params: {bits: 8, hashes: 2}}
`, `bad.yaml:3: family "fam": type bitmap: Redis stores a bitmap as a string; write type: string`},
		{"role needs another type", `
name: x
families:
  - {id: fam, pattern: "lb:{g}", type: hash, ttl: none, domain: d, role: leaderboard}
`, `bad.yaml:3: family "fam": role leaderboard needs type zset, not hash`},
		{"lock value", `
name: x
families:
  - {id: fam, pattern: "lk:{g}", type: string, ttl: required, domain: d, role: lock, params: {value: holder}}
`, `bad.yaml:3: family "fam": params: value "holder": want one of uuid, 1, epoch-ms`},
		{"dangling companion", `
name: x
families:
  - id: fam
    pattern: "b:bloom"
    type: string
    ttl: none
    domain: d
    role: bloom
    params:
      bits: 1000
      hashes: 3
      members: "b:sett"
`, `bad.yaml:12: family "fam": params: members: "b:sett" is the pattern of no family of this pack in the same database`},
		{"companion placeholder unknown", `
name: x
families:
  - id: lb
    pattern: "lb:{game}"
    type: zset
    ttl: none
    domain: d
    role: leaderboard
    params: {member: user, meta: "meta:{gameId}:{user}"}
  - {id: meta, pattern: "meta:{g}:{u}", type: hash, ttl: any, domain: d, role: leaderboard-meta}
`, `bad.yaml:9: family "lb": params: meta: "meta:{gameId}:{user}": {gameId} is neither a placeholder of this family nor its member`},
		{"meta label of a field not listed", `
name: x
families:
  - id: meta
    pattern: "meta:{g}:{u}"
    type: hash
    ttl: any
    domain: d
    role: leaderboard-meta
    params: {fields: [durationMs], labels: {durationMS: Duration}}
`, `bad.yaml:9: family "meta": params: "durationMS" has a label or format but is not one of fields [durationMs]`},
		{"meta format unknown", `
name: x
families:
  - id: meta
    pattern: "meta:{g}:{u}"
    type: hash
    ttl: any
    domain: d
    role: leaderboard-meta
    params: {fields: [at], formats: {at: date}}
`, `bad.yaml:9: family "meta": params: formats.at "date"`},
		{"same pattern twice", `
name: x
families:
  - {id: a, db: [1, 2], pattern: "k:{x}", type: string, ttl: any, domain: d, role: cache}
  - {id: b, db: 2, pattern: "k:{x}", type: string, ttl: any, domain: d, role: cache}
`, `bad.yaml:4: family "b": same pattern as "a" (line 3) in the same database; one of them could never match`},
		{"missing domain", `
name: x
families:
  - {id: a, pattern: "k:{x}", type: string, ttl: any, role: cache}
`, `bad.yaml:3: family "a": domain is required`},
		{"bad id", `
name: x
families:
  - {id: "Has Space", pattern: "k:{x}", type: string, ttl: any, domain: d, role: cache}
`, `bad.yaml:3: family "Has Space": id "Has Space": want 1-64 lower-case letters`},
		{"bad pack name", `
name: Eisland!
families:
` + okFamily + "\n", `bad.yaml:1: name "Eisland!": want 1-32 lower-case letters`},
		{"unknown top-level field", `
name: x
famlies: []
`, `bad.yaml:2: unknown field "famlies" (known: name, title, description, detect, params, families)`},
		{"no families", `
name: x
`, `bad.yaml:1: families: want a non-empty list of key families`},
		{"yaml syntax", `
name: x
families:
  - {id: a, pattern: "k:{x}", type: string
`, `bad.yaml:3: `},
		{"tab indentation", "name: x\nfamilies:\n\t- id: a\n", `bad.yaml:3: `},
		{"pattern starting with a brace unquoted", `
name: x
families:
  - id: a
    pattern: {x}:y
    type: string
    ttl: any
    domain: d
    role: cache
`, `bad.yaml:4: value is not allowed in this context (quote patterns: a value starting with { is a YAML mapping)`},
		{"empty", ``, `bad.yaml: empty pack`},
		{"two documents", "name: x\nfamilies:\n" + okFamily + "\n---\nname: y\n", `bad.yaml:5: one pack per file`},
		{"param without default", `
name: x
params:
  ns: {description: namespace}
families:
` + okFamily + "\n", `bad.yaml:3: params: ns: default is required, on one line`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load("bad.yaml", []byte(strings.TrimLeft(tc.src, "\n")))
			if err == nil {
				t.Fatalf("loaded; want error %q", tc.want)
			}
			var le *LoadError
			if !errors.As(err, &le) {
				t.Fatalf("error %T %v is not a *LoadError", err, err)
			}
			if !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("got  %s\nwant %s…", err, tc.want)
			}
		})
	}
}

func TestLoadFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mine.yaml")
	src := "name: mine\nfamilies:\n" + okFamily + "\n  - {id: bad, pattern: \"x\", type: string, ttl: any, domain: d, role: nope}\n"
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := LoadFile(path)
	if err == nil || !strings.HasPrefix(err.Error(), path+":4: family \"bad\": unknown role \"nope\"") {
		t.Errorf("got %v", err)
	}
	if _, err := LoadFile(filepath.Join(dir, "missing.yaml")); err == nil {
		t.Error("missing file: no error")
	}
}

func TestBuiltinPacks(t *testing.T) {
	packs := Builtin()
	var names []string
	for _, p := range packs {
		names = append(names, p.Name)
	}
	if strings.Join(names, ",") != "eisland,gateway,vertique" {
		t.Fatalf("builtin packs %v", names)
	}
	e := BuiltinPack("eisland")
	dbs := map[int]int{}
	for _, f := range e.Families {
		if len(f.DBs) != 1 {
			t.Errorf("%s: dbs %v", f.ID, f.DBs)
		}
		dbs[f.DBs[0]]++
	}
	if len(dbs) != 15 {
		t.Errorf("eisland covers %d databases, want 15", len(dbs))
	}
	if got := e.SampleDBs(); len(got) != 15 || got[14] != 14 {
		t.Errorf("SampleDBs %v", got)
	}
	tb := e.Family("slider-rate-create-ip").Params.(*TokenBucketParams)
	if tb.Capacity != 24 || tb.Window != time.Minute || tb.RefillPerMs != 0.0004 || tb.TokensField != "tokens" || tb.TimeField != "ts" || tb.Requested != 1 {
		t.Errorf("slider create/ip bucket %+v", tb)
	}
	if ttl := e.Family("slider-rate-create-ip").TTL; ttl.Kind != TTLRequired || ttl.Max != 2*time.Minute {
		t.Errorf("slider ttl %+v", ttl)
	}
	cw := e.Family("verify-rate-email-day").Params.(*CounterWindowParams)
	if cw.Limit != 30 || cw.Calendar != "day" || cw.Location().String() != "+08:00" {
		t.Errorf("email/day %+v", cw)
	}
	q := e.Family("tmt-quota").Params.(*QuotaParams)
	if q.Limit != 5_000_000 || q.Period != "month" || q.Unit != "chars" {
		t.Errorf("tmt quota %+v", q)
	}
	if b := e.Family("agent-balance").Params.(*BalanceParams); b.Scale != 8 {
		t.Errorf("balance %+v", b)
	}
	if l := e.Family("mg-score-lock").Params.(*LockParams); l.Value != "1" {
		t.Errorf("mg lock %+v", l)
	}
	if l := e.Family("order-op-lock").Params.(*LockParams); l.Value != "uuid" {
		t.Errorf("op lock %+v", l)
	}

	g := BuiltinPack("gateway")
	rps := g.Family("rps-bucket")
	tb = rps.Params.(*TokenBucketParams)
	if tb.Capacity != 60 || tb.RefillPerSec != 1 || tb.Window != time.Minute || tb.TimeField != "last_refill" {
		t.Errorf("q:rps params %+v", tb)
	}
	if rps.TTL.Max != 2*time.Minute {
		t.Errorf("q:rps ttl %v", rps.TTL)
	}
	res := g.Family("reservation")
	if v := res.TTL.Violation(-1); v.Fault != TTLMissing {
		t.Errorf("q:reserved without TTL: %+v", v)
	}
	if v := res.TTL.Violation(4 * time.Minute); v.Broken() {
		t.Errorf("q:reserved with TTL: %+v", v)
	}
	if v := g.Family("routing-version").TTL.Violation(time.Second); !v.Broken() {
		t.Error("cfg:routing:version with a TTL: no violation")
	}
	if g.Family("reservation").Params.(*ReservationParams).Budget.Family.ID != "monthly-tokens" {
		t.Error("reservation budget ref")
	}
}

func TestWith(t *testing.T) {
	v := BuiltinPack("vertique")
	mine, err := v.With(map[string]string{"namespace": "shop:{rl}"})
	if err != nil {
		t.Fatal(err)
	}
	key := "shop:{rl}:v1:" + fp + ":" + hmac
	if f, ok := mine.Classifier().Classify(0, key); !ok || f.ID != "bucket" {
		t.Errorf("custom namespace: %v", f)
	}
	if _, ok := v.Classifier().Classify(0, key); ok {
		t.Error("the default pack changed")
	}
	if mine.Params[0].Value != "shop:{rl}" || mine.Params[0].Default != "vertique:rate-limit" {
		t.Errorf("params %+v", mine.Params)
	}
	if _, err := v.With(map[string]string{"nmespace": "x"}); err == nil || !strings.Contains(err.Error(), `has no parameter "nmespace" (has: namespace)`) {
		t.Errorf("unknown parameter: %v", err)
	}

	g, err := BuiltinPack("gateway").With(map[string]string{"rps_capacity": "600", "rps_ttl": "20m"})
	if err != nil {
		t.Fatal(err)
	}
	tb := g.Family("rps-bucket").Params.(*TokenBucketParams)
	if tb.Capacity != 600 || tb.Window != 10*time.Minute || g.Family("rps-bucket").TTL.Max != 20*time.Minute {
		t.Errorf("overridden bucket %+v ttl %v", tb, g.Family("rps-bucket").TTL)
	}
	_, err = BuiltinPack("gateway").With(map[string]string{"rps_capacity": "lots"})
	if err == nil || !strings.HasPrefix(err.Error(), `gateway.yaml:35: family "rps-bucket": params: bad value "lots": want a number`) {
		t.Errorf("bad override: %v", err)
	}
}

func TestTTLPolicy(t *testing.T) {
	r := TTLPolicy{Kind: TTLRequired, Min: 10 * time.Second, Max: 15 * time.Second}
	for pttl, want := range map[time.Duration]TTLViolation{
		-1:               {Fault: TTLMissing, TTL: -1},
		12 * time.Second: {},
		20 * time.Second: {Fault: TTLAboveMax, TTL: 20 * time.Second, Bound: 15 * time.Second},
		5 * time.Second:  {Fault: TTLBelowMin, TTL: 5 * time.Second, Bound: 10 * time.Second},
	} {
		if got := r.Violation(pttl); got != want || got.Broken() != (pttl != 12*time.Second) {
			t.Errorf("Violation(%v) = %+v, want %+v", pttl, got, want)
		}
	}
	if (TTLPolicy{Kind: TTLNone}).Violation(-1).Broken() || (TTLPolicy{Kind: TTLAny}).Violation(time.Hour).Broken() {
		t.Error("none/any")
	}
	if v := (TTLPolicy{Kind: TTLNone}).Violation(time.Minute); v != (TTLViolation{Fault: TTLUnwanted, TTL: time.Minute}) {
		t.Errorf("none with a TTL: %+v", v)
	}
	for in, want := range map[string]time.Duration{"30d": 30 * 24 * time.Hour, "90s": 90 * time.Second, "1h30m": 90 * time.Minute, "0": 0} {
		if got, err := parseDuration(in); err != nil || got != want {
			t.Errorf("parseDuration(%q) = %v, %v", in, got, err)
		}
	}
	for _, bad := range []string{"60", "5 minutes", "d", "-3"} {
		if _, err := parseDuration(bad); err == nil {
			t.Errorf("parseDuration(%q): no error", bad)
		}
	}
}

func TestPatternString(t *testing.T) {
	for _, src := range []string{"a{{b}}:{x}", "$$x:{y:hex8}:{z:base64url}", "{a}:b", "k:{v:digits}"} {
		p, err := parsePattern(src, nil)
		if err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		q, err := parsePattern(p.String(), nil)
		if err != nil || q.String() != p.String() || q.shape() != p.shape() {
			t.Errorf("%q → %q does not round-trip", src, p.String())
		}
	}
	p, _ := parsePattern("a{{b}}$$:{x}", nil)
	if k, _ := p.Key(map[string]string{"x": "1"}); k != "a{b}$:1" {
		t.Errorf("escapes: %q", k)
	}
}

// The example at the top of FORMAT.md must load and classify.
func TestFormatExample(t *testing.T) {
	doc, err := os.ReadFile("FORMAT.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(doc), "```yaml\n")
	src, _, _ := strings.Cut(rest, "```")
	p := mustLoad(t, "FORMAT.md", src)
	f, ok := p.Classifier().Classify(1, "shop:rl:login:ops:admin")
	if !ok || f.ID != "login-bucket" || f.Params.(*TokenBucketParams).RefillPerMs != 10.0/60000 {
		t.Errorf("example: %v", f)
	}
	if f, ok := p.Classifier().Classify(0, "shop:session:0123456789abcdef0123456789abcdef"); !ok || !f.Sensitive {
		t.Errorf("example session: %v", f)
	}
}

func TestTypeViolation(t *testing.T) {
	f := BuiltinPack("gateway").Family("rps-bucket")
	if v := f.TypeViolation("hash"); v != "" {
		t.Errorf("hash: %q", v)
	}
	if v := f.TypeViolation("string"); v != "type string, pack says hash" {
		t.Errorf("string: %q", v)
	}
}

// A family is titled by the pack, or by its id in words.
func TestFamilyName(t *testing.T) {
	p := BuiltinPack("eisland")
	if got := p.Family("slider-rate-create-account").Name(); got != "CAPTCHA requests per account" {
		t.Errorf("titled family: %q", got)
	}
	if got := (&Family{ID: "wallpaper-my-list_total.v2"}).Name(); got != "Wallpaper my list total v2" {
		t.Errorf("untitled family: %q", got)
	}
}
