package handlers_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// contract validates responses against the served OpenAPI document's
// response schemas (JSON Schema 2020-12, the dialect of OpenAPI 3.1), and
// counts the operations a test exercised.
type contract struct {
	t    *testing.T
	c    *jsonschema.Compiler
	ops  map[string]bool
	seen map[string]bool
}

func newContract(t *testing.T, c *apiClient) *contract {
	t.Helper()
	_, body := c.do(http.MethodGet, "/api/v1/openapi.json", nil)
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	comp := jsonschema.NewCompiler()
	comp.DefaultDraft(jsonschema.Draft2020)
	comp.AssertFormat()
	if err := comp.AddResource("https://keydeck.invalid/openapi.json", doc); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	_ = json.Unmarshal(body, &m)
	return &contract{t: t, c: comp, ops: apiOperations(m), seen: map[string]bool{}}
}

// check validates body, the answer of op (a method and the document's
// path) with status, against the document's schema for it.
func (k *contract) check(op string, status int, ctype string, body []byte) {
	k.t.Helper()
	method, path, _ := strings.Cut(op, " ")
	if !k.ops[op] {
		k.t.Fatalf("%s is not in the OpenAPI document", op)
	}
	k.seen[op] = true
	esc := strings.NewReplacer("~", "~0", "/", "~1")
	ptr := "#/paths/" + esc.Replace(path) + "/" + strings.ToLower(method) + "/responses/" + strconv.Itoa(status) + "/content/" + esc.Replace(ctype) + "/schema"
	sch, err := k.c.Compile("https://keydeck.invalid/openapi.json" + ptr)
	if err != nil {
		k.t.Fatalf("%s %d %s: no schema in the document: %v", op, status, ctype, err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		k.t.Fatalf("%s: not JSON: %v: %s", op, err, body)
	}
	if err := sch.Validate(v); err != nil {
		k.t.Errorf("%s %d does not match the contract: %v\n%s", op, status, err, body)
	}
}

func itoa(n int) string {
	return strings.TrimSpace(strings.Repeat(" ", 0) + func() string { b, _ := json.Marshal(n); return string(b) }())
}

// call sends a request of op, wants status, validates the answer against
// the contract and decodes it into v (nil: not decoded).
func (k *contract) call(c *apiClient, op, target string, body any, want int, v any) []byte {
	k.t.Helper()
	method, _, _ := strings.Cut(op, " ")
	code, out := c.do(method, target, body)
	if code != want {
		k.t.Fatalf("%s %s: %d, want %d: %s", method, target, code, want, out)
	}
	ctype := "application/json"
	if code >= 400 {
		ctype = "application/problem+json"
	}
	if got := c.lastHdr.Get("Content-Type"); !strings.HasPrefix(got, ctype) {
		k.t.Errorf("%s %s: Content-Type %q, want %s", method, target, got, ctype)
	}
	k.check(op, code, ctype, out)
	if v != nil {
		if err := json.Unmarshal(out, v); err != nil {
			k.t.Fatal(err)
		}
	}
	return out
}

// Every operation's real answer, on the seeds' data, matches the
// OpenAPI document; the support tasks work end to end (check, unban,
// undo).
func TestAPIResponsesMatchTheContract(t *testing.T) {
	t.Parallel()
	f := newSeededConsole(t)
	ctx := context.Background()
	f.redis.Client(0).Set(ctx, "conf:\xff", "v\xfe", 0)
	c := newAPIClient(t, f)
	k := newContract(t, c)

	var conns struct {
		Items []struct{ Name, State string }
	}
	k.call(c, "GET /api/v1/connections", "/api/v1/connections", nil, 200, &conns)
	if len(conns.Items) != 1 || conns.Items[0].Name != "main" || conns.Items[0].State != "up" {
		t.Errorf("connections: %+v", conns)
	}

	const fox = "🦊fox"
	var ban struct {
		Banned   *bool
		BloomHit *bool `json:"bloom_hit"`
		InSet    *bool `json:"in_set"`
	}
	check := func(name string) bool {
		t.Helper()
		k.call(c, "GET /api/v1/connections/{conn}/ban-check", "/api/v1/connections/main/ban-check"+q("name", name), nil, 200, &ban)
		if ban.Banned == nil || ban.BloomHit == nil || ban.InSet == nil {
			t.Fatalf("ban-check of %q left an answer unknown: %+v", name, ban)
		}
		return *ban.Banned
	}
	if !check(fox) || !check(`eve"><script>alert(1)</script>'`) || check("alice.w") {
		t.Errorf("ban-check verdicts are wrong")
	}

	var user struct {
		Keys []struct {
			Family *string
			Key    json.RawMessage
		}
		Bans []struct{ Banned *bool }
	}
	k.call(c, "GET /api/v1/connections/{conn}/user", "/api/v1/connections/main/user"+q("name", "bob_chen"), nil, 200, &user)
	if !hasFamily(user.Keys, "login-lock") {
		t.Errorf("bob_chen's user view has no login-lock key: %+v", user.Keys)
	}

	var key struct {
		Type  string
		TTLMs int64 `json:"ttl_ms"`
		Key   json.RawMessage
		Value struct{ String json.RawMessage }
	}
	k.call(c, "GET /api/v1/connections/{conn}/db/{n}/key", "/api/v1/connections/main/db/0/key"+q("key_b64", base64.RawURLEncoding.EncodeToString([]byte("conf:\xff"))), nil, 200, &key)
	if key.Type != "string" || key.TTLMs != -1 || string(key.Key) != `{"b64":"Y29uZjr/"}` || string(key.Value.String) != `{"b64":"dv4="}` {
		t.Errorf("key conf:\\xff: %+v", key)
	}
	k.call(c, "GET /api/v1/connections/{conn}/db/{n}/key", "/api/v1/connections/main/db/14/key"+q("key", "mg:score:leaderboard:2048"), nil, 200, nil)

	var lb struct {
		Items []struct {
			Rank   int64
			Member json.RawMessage
			Score  *float64
		}
		Next *string
	}
	k.call(c, "GET /api/v1/connections/{conn}/db/{n}/leaderboard", "/api/v1/connections/main/db/14/leaderboard"+q("key", "mg:score:leaderboard:2048", "start", "0", "count", "10"), nil, 200, &lb)
	if len(lb.Items) != 10 || lb.Items[0].Rank != 1 || lb.Items[0].Score == nil || lb.Next == nil || *lb.Next != "10" {
		t.Errorf("leaderboard window: %+v", lb)
	}

	// Unban the fox (preview → execute), then undo it.
	var pv struct{ Token, Kind string }
	k.call(c, "POST /api/v1/actions/preview", "/api/v1/actions/preview", map[string]any{"kind": "unban", "conn": "main", "db": 9, "key": "user:ban:set", "args": map[string]any{"name": fox}}, 200, &pv)
	var out struct {
		AuditID string `json:"audit_id"`
		Undo    map[string]any
	}
	k.call(c, "POST /api/v1/actions/execute", "/api/v1/actions/execute", map[string]any{"token": pv.Token}, 200, &out)
	if check(fox) {
		t.Fatal("the fox is still banned after the unban")
	}
	k.call(c, "POST /api/v1/actions/execute", "/api/v1/actions/execute", map[string]any{"token": pv.Token}, 400, nil) // a confirmation runs once
	if out.Undo == nil {
		t.Fatalf("the unban's outcome names no undo: %+v", out)
	}
	k.call(c, "POST /api/v1/actions/undo", "/api/v1/actions/undo", out.Undo, 200, &pv)
	k.call(c, "POST /api/v1/actions/execute", "/api/v1/actions/execute", map[string]any{"token": pv.Token}, 200, nil)
	if !check(fox) {
		t.Error("the undo did not ban the fox again")
	}
	contractOpsPages(t, k, c)
	contractDBAudit(t, k, c)
	contractBrowse(t, k, c)
	contractSearch(t, k, c)
	contractGateway(t, k)
	contractVertique(t, k, c)
	for op := range k.ops {
		if !k.seen[op] {
			t.Errorf("%s was not exercised: every operation's answer is checked against the contract", op)
		}
	}
}

func hasFamily(keys []struct {
	Family *string
	Key    json.RawMessage
}, id string) bool {
	for _, k := range keys {
		if k.Family != nil && *k.Family == id {
			return true
		}
	}
	return false
}
