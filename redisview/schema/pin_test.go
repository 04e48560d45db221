package schema

import "testing"

func TestPinned(t *testing.T) {
	e := BuiltinPack("eisland")
	cases := []struct {
		fam, key string
		vals     map[string]string
		want     bool
	}{
		{"issue-feedback-submit", "issue-feedback:submit:ops:admin:10.0.0.1", map[string]string{"username": "ops:admin"}, true},
		{"issue-feedback-submit", "issue-feedback:submit:ops:admin:10.0.0.1", map[string]string{"username": "ops"}, true},
		{"issue-feedback-submit", "issue-feedback:submit:ops:admin2:10.0.0.1", map[string]string{"username": "ops:admin"}, false},
		{"totp-replay", "totp:security:replay:ops:admin2:1:2", map[string]string{"username": "ops:admin"}, false},
		{"totp-replay", "totp:security:replay:ops:admin:1:2", map[string]string{"username": "ops:admin"}, true},
		{"totp-replay", "totp:security:replay:ops:admin:x:1:2", map[string]string{"username": "ops:admin"}, false},
		{"mg-session", "mg:score:session:2048:ops:admin:s1", map[string]string{"userId": "ops:admin"}, true},
		{"mg-session", "mg:score:session:2048:ops:admin2:s1", map[string]string{"userId": "ops:admin"}, false},
		{"slider-fail-account", "verify:slider:fail:account:b3BzOmFkbWlu", map[string]string{"account": "ops:admin"}, true},
		{"slider-fail-account", "verify:slider:fail:account:b3BzOmFkbWluMg", map[string]string{"account": "ops:admin"}, false},
		{"verify-code", "verify:code:LOGIN:a@b.c", map[string]string{"email": "a@b.c"}, true},
		{"verify-code", "verify:code:LOGIN:a@b.cc", map[string]string{"email": "a@b.c"}, false},
	}
	for _, c := range cases {
		f := e.Family(c.fam)
		if got := f.Pattern.Pinned(c.key, c.vals); got != c.want {
			t.Errorf("%s %q %v: got %v, want %v", c.fam, c.key, c.vals, got, c.want)
		}
	}
}
