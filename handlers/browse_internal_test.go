package handlers

import (
	"strings"
	"testing"
)

// An unmatched-prefix row links to the keys starting with what precedes
// its "*", bytes exact; a one-segment group ("tmp:*") and "(no colon)" to
// only the names with no further ':' (the group's keys exactly); the
// sweep's catch-all group lists every key that matches no family; a
// prefix too long for a link is not linked.
func TestPrefixListHref(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 5000) + ":y:*"
	for _, tc := range []struct{ group, want string }{
		{"legacy:captcha:*", "/c/main/db/4/keys?prefix=legacy%3Acaptcha%3A"},
		{"tmp:*", "/c/main/db/4/keys?prefix=tmp%3A&flat=1"},
		{"\xff<i>:x:*", "/c/main/db/4/keys?prefix=%FF%3Ci%3E%3Ax%3A"},
		{"a*b:c:*", "/c/main/db/4/keys?prefix=a%2Ab%3Ac%3A"},
		{"(no colon)", "/c/main/db/4/keys?prefix=&flat=1"},
		{"(other prefixes)", "/c/main/db/4/keys?prefix="},
		{long, ""},
	} {
		if got := prefixListHref("main", 4, tc.group); got != tc.want {
			t.Errorf("%.40q: %q, want %q", tc.group, got, tc.want)
		}
	}
}
