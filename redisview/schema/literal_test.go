package schema

import "testing"

func TestPatternLiterals(t *testing.T) {
	params := map[string]string{"ns": "vq"}
	for _, tc := range []struct {
		src, prefix, longest string
	}{
		{"verify:slider:rate:create:account:{acct:base64}", "verify:slider:rate:create:account:", "verify:slider:rate:create:account:"},
		{"mg:score:leaderboard:{gameId:digits}", "mg:score:leaderboard:", "mg:score:leaderboard:"},
		{"${ns}:v1:{fp:hex8}:{mac:hex64}", "vq:v1:", "vq:v1:"},
		{"{user}:session:{id}", "", ":session:"},
		{"{a}:x:{b}:longer:{c}", "", ":longer:"},
		{"{a}:ab:{b}:cd", "", ":ab:"},
		{"a{{b}}$$:{x}", "a{b}$:", "a{b}$:"},
		{"plain:key", "plain:key", "plain:key"},
	} {
		p, err := parsePattern(tc.src, params)
		if err != nil {
			t.Fatalf("%s: %v", tc.src, err)
		}
		if got := p.LiteralPrefix(); got != tc.prefix {
			t.Errorf("%s: LiteralPrefix = %q, want %q", tc.src, got, tc.prefix)
		}
		if got := p.LongestLiteral(); got != tc.longest {
			t.Errorf("%s: LongestLiteral = %q, want %q", tc.src, got, tc.longest)
		}
	}
}
