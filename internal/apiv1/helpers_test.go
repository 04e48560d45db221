package apiv1

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/schema"
)

// t0 is the tests' now.
var t0 = time.Date(2026, 12, 1, 21, 0, 0, 0, time.FixedZone("CET", 3600))

// pack is a built-in pack by name.
func pack(t *testing.T, name string) *schema.Pack {
	t.Helper()
	p := schema.BuiltinPack(name)
	if p == nil {
		t.Fatalf("no built-in pack %q", name)
	}
	return p
}

// match classifies key in db of p, failing the test when no family does.
func match(t *testing.T, p *schema.Pack, db int, key string) schema.Match {
	t.Helper()
	m, ok := p.Classifier().Match(db, key)
	if !ok {
		t.Fatalf("%q in db%d matches no family of %s", key, db, p.Name)
	}
	return m
}

// sensitive is a copy of family f marked sensitive.
func sensitive(f *schema.Family) *schema.Family {
	c := *f
	c.Sensitive = true
	return &c
}

func matched(p *schema.Pack) redisview.PackChoice {
	return redisview.PackChoice{Pack: p, Why: "detected", Detected: true}
}

func up() redisview.Status {
	return redisview.Status{Up: true, Since: t0.Add(-time.Hour), Checked: t0}
}

// jsonOf marshals v, failing the test on an error.
func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// has fails the test unless the JSON of v contains every want.
func has(t *testing.T, v any, want ...string) {
	t.Helper()
	s := jsonOf(t, v)
	for _, w := range want {
		if !strings.Contains(s, w) {
			t.Errorf("JSON lacks %s:\n%s", w, s)
		}
	}
}

// hasNot fails the test if the JSON of v contains any of bad.
func hasNot(t *testing.T, v any, bad ...string) {
	t.Helper()
	s := jsonOf(t, v)
	for _, w := range bad {
		if strings.Contains(s, w) {
			t.Errorf("JSON holds %s:\n%s", w, s)
		}
	}
}

// displayStrings are what a contract never holds: figures formatted for
// people.
var displayStrings = []string{"—", "≈", " ms\"", "m 0", "n/a", "not known", "\"1,", "%\""}

// conforms fails the test unless the JSON of v validates against the
// OpenAPI schema huma produces from v's type: the contract the document
// states is the one the mapper keeps.
func conforms(t *testing.T, v any) {
	t.Helper()
	for _, e := range schemaErrors(t, v) {
		t.Errorf("%T breaks its schema: %v", v, e)
	}
}

// schemaErrors are the ways the JSON of v breaks the OpenAPI schema huma
// produces from v's type.
func schemaErrors(t *testing.T, v any) []error {
	t.Helper()
	reg := huma.NewMapRegistry("#/components/schemas/", huma.DefaultSchemaNamer)
	s := reg.Schema(reflect.TypeOf(v), true, "")
	var doc any
	if err := json.Unmarshal([]byte(jsonOf(t, v)), &doc); err != nil {
		t.Fatal(err)
	}
	pb := huma.NewPathBuffer(make([]byte, 0, 128), 0)
	res := &huma.ValidateResult{}
	huma.Validate(reg, s, pb, huma.ModeReadFromServer, doc, res)
	return res.Errors
}
