package schema

import (
	"slices"
	"testing"
)

// The seeds say "base64(account)" without naming the variant: a base64
// placeholder holds every one (standard or URL-safe, padded or not), the
// one Key writes first, equal encodings once; base64url pins the alphabet
// but not the padding.
func TestPlaceholderEncodings(t *testing.T) {
	b64 := Placeholder{Name: "account", Class: ClassBase64}
	url := Placeholder{Name: "account", Class: ClassBase64URL}
	cases := []struct {
		ph    Placeholder
		value string
		want  []string
	}{
		// +/ and padding: four different names.
		{b64, "Zoë:ops/β", []string{"Wm/DqzpvcHMvzrI=", "Wm/DqzpvcHMvzrI", "Wm_DqzpvcHMvzrI=", "Wm_DqzpvcHMvzrI"}},
		{b64, "🦊fox", []string{"8J+mimZveA==", "8J+mimZveA", "8J-mimZveA==", "8J-mimZveA"}},
		// Padding, no +/: the alphabets agree.
		{b64, "张三:vip", []string{"5byg5LiJOnZpcA==", "5byg5LiJOnZpcA"}},
		// +/, no padding: the paddings agree.
		{b64, "韩梅梅", []string{"6Z+p5qKF5qKF", "6Z-p5qKF5qKF"}},
		// Neither: one name.
		{b64, "ops:admin", []string{"b3BzOmFkbWlu"}},
		{url, "Zoë:ops/β", []string{"Wm_DqzpvcHMvzrI", "Wm_DqzpvcHMvzrI="}},
		{url, "张三:vip", []string{"5byg5LiJOnZpcA", "5byg5LiJOnZpcA=="}},
		{url, "ops:admin", []string{"b3BzOmFkbWlu"}},
		// A length keeps only the encodings that have it.
		{Placeholder{Name: "a", Class: ClassBase64, Len: 15}, "Zoë:ops/β", []string{"Wm/DqzpvcHMvzrI", "Wm_DqzpvcHMvzrI"}},
		{Placeholder{Name: "a", Class: ClassBase64, Len: 16}, "Zoë:ops/β", []string{"Wm/DqzpvcHMvzrI=", "Wm_DqzpvcHMvzrI="}},
		{Placeholder{Name: "a", Class: ClassBase64, Len: 8}, "Zoë:ops/β", nil},
		// Other classes hold the value itself, if they can.
		{Placeholder{Name: "u", Class: ClassAny}, "ops:admin", []string{"ops:admin"}},
		{Placeholder{Name: "u", Class: ClassSegment}, "ops:admin", nil},
		{Placeholder{Name: "u", Class: ClassAny}, "", nil},
		{b64, "", nil},
	}
	for _, c := range cases {
		if got := c.ph.Encodings(c.value); !slices.Equal(got, c.want) {
			t.Errorf("%s %q: %q, want %q", c.ph, c.value, got, c.want)
		}
	}
}

func TestPatternKeys(t *testing.T) {
	pat := func(src string) *Pattern {
		p, err := parsePattern(src, nil)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	bucket := pat("verify:slider:rate:create:account:{account:base64}")
	cases := []struct {
		p    *Pattern
		vars map[string]string
		want []string
	}{
		{bucket, map[string]string{"account": "Zoë:ops/β"}, []string{
			"verify:slider:rate:create:account:Wm/DqzpvcHMvzrI=", "verify:slider:rate:create:account:Wm/DqzpvcHMvzrI",
			"verify:slider:rate:create:account:Wm_DqzpvcHMvzrI=", "verify:slider:rate:create:account:Wm_DqzpvcHMvzrI",
		}},
		{bucket, map[string]string{"account": "张三:vip"}, []string{
			"verify:slider:rate:create:account:5byg5LiJOnZpcA==", "verify:slider:rate:create:account:5byg5LiJOnZpcA",
		}},
		{bucket, map[string]string{"account": "ops:admin"}, []string{"verify:slider:rate:create:account:b3BzOmFkbWlu"}},
		// Two placeholders: every combination.
		{pat("x:{a:base64}:{b:base64url}:{c}"), map[string]string{"a": "韩梅梅", "b": "张三:vip", "c": "p/q"}, []string{
			"x:6Z+p5qKF5qKF:5byg5LiJOnZpcA:p/q", "x:6Z+p5qKF5qKF:5byg5LiJOnZpcA==:p/q",
			"x:6Z-p5qKF5qKF:5byg5LiJOnZpcA:p/q", "x:6Z-p5qKF5qKF:5byg5LiJOnZpcA==:p/q",
		}},
		{pat("k:{n:digits}"), map[string]string{"n": "42"}, []string{"k:42"}},
	}
	for _, c := range cases {
		got, err := c.p.Keys(c.vars)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%s %v: %q, %v; want %q", c.p, c.vars, got, err, c.want)
		}
		if k, err := c.p.Key(c.vars); err != nil || k != got[0] {
			t.Errorf("%s %v: Key %q, %v; want the first of Keys", c.p, c.vars, k, err)
		}
	}
	for _, c := range []struct {
		p    *Pattern
		vars map[string]string
	}{
		{bucket, map[string]string{}},
		{bucket, map[string]string{"account": ""}},
		{pat("k:{n:digits}"), map[string]string{"n": "4a"}},
		{pat("k:{a:base64}:{b:base64}:{c:base64}:{d:base64}"), map[string]string{"a": "Zoë:ops/β", "b": "Zoë:ops/β", "c": "Zoë:ops/β", "d": "Zoë:ops/β"}},
	} {
		if got, err := c.p.Keys(c.vars); err == nil {
			t.Errorf("%s %v: %q, want an error", c.p, c.vars, got)
		}
	}
}

// A key holding the value in any encoding its class allows is pinned to
// it; a longer name whose encoding starts with the value's is not.
func TestPinnedEveryBase64Variant(t *testing.T) {
	f := BuiltinPack("eisland").Family("slider-fail-account")
	for _, enc := range []string{"Wm/DqzpvcHMvzrI=", "Wm/DqzpvcHMvzrI", "Wm_DqzpvcHMvzrI=", "Wm_DqzpvcHMvzrI"} {
		if !f.Pattern.Pinned("verify:slider:fail:account:"+enc, map[string]string{"account": "Zoë:ops/β"}) {
			t.Errorf("%s is not pinned to Zoë:ops/β", enc)
		}
	}
	for _, enc := range []string{"b3BzOmFkbWluMg==", "b3BzOmFkbWluMg"} {
		if f.Pattern.Pinned("verify:slider:fail:account:"+enc, map[string]string{"account": "ops:admin"}) {
			t.Errorf("%s (ops:admin2) is pinned to ops:admin", enc)
		}
	}
}
