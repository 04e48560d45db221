package demo

import (
	"context"
	"slices"
	"testing"
)

// A MATCH pattern that is not UTF-8 (a user named "\xff…" searched) gets
// every key Redis returns (and, where the invalid byte is, keys with
// another character there), instead of a panic in miniredis's pattern
// compiler that would stop the demo.
func TestHostScanMatchNotUTF8(t *testing.T) {
	th := startHost(t)
	c := th.client(0, 3)
	ctx := context.Background()
	for _, k := range []string{"u:\xffab:1", "u:ok:1", "u:\xff\\x:2"} {
		c.Set(ctx, k, "1", 0)
	}
	c.HSet(ctx, "h", "\xfff", "1", "g", "2")
	for _, tc := range []struct {
		match string
		want  []string
	}{
		{"u:\xffab:*", []string{"u:\xffab:1"}},
		{"u:\\\xff*", []string{"u:ok:1", "u:\xff\\x:2", "u:\xffab:1"}}, // Redis: not u:ok:1
	} {
		keys, _, err := c.Scan(ctx, 0, tc.match, 100).Result()
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(keys)
		if !slices.Equal(keys, tc.want) {
			t.Errorf("SCAN MATCH %q: %q, want %q", tc.match, keys, tc.want)
		}
	}
	fields, _, err := c.HScan(ctx, "h", 0, "\xff*", 100).Result()
	if err != nil || len(fields) != 4 || !slices.Contains(fields, "\xfff") {
		t.Errorf("HSCAN: %q %v", fields, err)
	}
}
