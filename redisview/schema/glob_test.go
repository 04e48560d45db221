package schema

import "testing"

func TestEscapeGlob(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"abc", "abc"},
		{`a*b?c[d]e\f`, `a\*b\?c\[d\]e\\f`},
		{"日本", "日本"},
		{"^x-y", "^x-y"}, // special only inside brackets
		{"{id}:$", "{id}:$"},
		{`\\`, `\\\\`},
		{"***", `\*\*\*`},
		// Bytes that are not UTF-8 pass through, and a special byte
		// after one is still escaped.
		{"\xff\xfe*", "\xff\xfe\\*"},
		{"\x00[\x80]", "\x00\\[\x80\\]"},
		{"\xe6\x97*", "\xe6\x97\\*"}, // a cut multibyte sequence
		{" pad ", " pad "},
	} {
		if got := EscapeGlob(tc.in); got != tc.want {
			t.Errorf("EscapeGlob(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
