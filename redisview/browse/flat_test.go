package browse_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/keydeck/keydeck/redisview/browse"
)

// A flat prefix list holds exactly one group of the database page: "a:*"
// is the unmatched names with no ':' after "a:", never "a:b:…" (the group
// "a:b:*"); prefix "" and flat is the group "(no colon)". Without flat a
// prefix list holds every unmatched name under the prefix.
func TestFlatPrefixListIsOneGroup(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	c := f.srv.Client(0)
	for _, k := range []string{"a:x", "a:y", "a:", "a:b:x", "a:b:", "a:b:c:d", "ab:x", "plain", "other", "rl:bucket:u1"} {
		c.Set(ctx, k, "1", 0)
	}
	for _, tc := range []struct {
		prefix string
		flat   bool
		want   string
	}{
		{"a:", true, "a:,a:x,a:y"},
		{"a:", false, "a:,a:b:,a:b:c:d,a:b:x,a:x,a:y"},
		{"a:b:", false, "a:b:,a:b:c:d,a:b:x"},
		{"", true, "other,plain"},
	} {
		names, _ := walkAll(t, f, browse.Request{Classifier: f.cls, Prefix: tc.prefix, Flat: tc.flat})
		slices.Sort(names)
		if got := strings.Join(names, ","); got != tc.want {
			t.Errorf("prefix %q flat %v: %s, want %s", tc.prefix, tc.flat, got, tc.want)
		}
	}
}
