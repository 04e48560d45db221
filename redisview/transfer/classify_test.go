package transfer_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview/transfer"
)

// A key above the cap is not read (its size is checked first) and its
// line says so; the preview classes each line of a file against a
// database: new, overwritten (with its current size), identical (in any
// order for hashes and sets), no value.
func TestCapAndClassification(t *testing.T) {
	rs := redistest.Start(t)
	c := rs.Client(0)
	ctx := context.Background()
	for i := range 30 {
		c.SAdd(ctx, "big", fmt.Sprint(i))
	}
	c.Set(ctx, "long", strings.Repeat("x", 1000), 0)
	lim := transfer.ReadLimits{Page: 10, Chunk: 10, MaxElements: 20, MaxBytes: 500}
	rd := &transfer.Reader{C: c, Limits: lim}
	for key, says := range map[string]string{"big": "skipped: larger than 20 elements (30)", "long": "skipped: larger than 500 B (1000 B)"} {
		r, ok, err := rd.Read(ctx, key)
		if err != nil || !ok || r.HasValue() || r.Skipped != says {
			t.Errorf("%s: %+v %v %v, want skipped %q", key, r, ok, err, says)
		}
	}

	c.HSet(ctx, "h", "a", "1", "b", "2")
	c.Set(ctx, "s", "old value", 0)
	file := `{"key":"h","type":"hash","value":[["b","2"],["a","1"]]}
{"key":"s","type":"string","value":"new"}
{"key":"n","type":"list","value":["x"]}
{"key":"h2","type":"hash","value":{"a":"1"}}
{"key":"w","type":"string","sensitive":true,"withheld":"sensitive"}`
	c.HSet(ctx, "h2", "a", "1", "extra", "2")
	recs, err := transfer.ReadAll(strings.NewReader(file), transfer.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	want := []transfer.Class{transfer.Identical, transfer.Overwritten, transfer.New, transfer.Overwritten, transfer.NoValue}
	rd = &transfer.Reader{C: c}
	for i, r := range recs {
		v, err := transfer.Classify(ctx, rd, r)
		if err != nil || v.Class != want[i] {
			t.Errorf("%s: %v %v, want %s", r.Key, v.Class, err, want[i])
		}
		if r.Key == "s" && (v.Current.Type != "string" || v.Current.Bytes != int64(len("old value"))) {
			t.Errorf("overwritten s: current %+v", v.Current)
		}
	}
}
