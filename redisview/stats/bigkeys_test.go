package stats_test

import (
	"context"
	"strings"
	"testing"

	"github.com/keydeck/keydeck/internal/redistest"
)

// A string's length is bytes, a collection's is elements: the two are
// ranked apart, never in one list.
func TestBiggestKeysRankStringsApart(t *testing.T) {
	rs := redistest.Start(t)
	ctx := context.Background()
	db := rs.Client(2)
	db.Set(ctx, "long", strings.Repeat("x", 5000), 0)
	db.Set(ctx, "short", "xy", 0)
	db.SAdd(ctx, "set", "a", "b", "c")
	db.RPush(ctx, "list", "a", "b")
	d := sweepOnce(t, openConn(t, rs.URL(0)), 2)
	for _, b := range d.ByElements {
		if b.Type == "string" {
			t.Fatalf("a string ranked among collections: %+v", d.ByElements)
		}
	}
	if len(d.ByElements) != 2 || d.ByElements[0].Key != "set" || d.ByElements[0].Elements != 3 {
		t.Fatalf("collections = %+v", d.ByElements)
	}
	if len(d.ByLength) != 2 || d.ByLength[0].Key != "long" || d.ByLength[0].Elements != 5000 || d.ByLength[1].Key != "short" {
		t.Fatalf("strings = %+v", d.ByLength)
	}
}
