package handlers

import (
	"slices"
	"testing"

	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/views"
)

func TestRowOptions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		retained int
		current  int64
		want     []int64
	}{
		{0, 50, []int64{10, 25, 50, 100, 200, 500}},
		{200, 50, []int64{10, 25, 50, 100, 200}},
		{30, 25, []int64{10, 25, 30}},
		{30, 50, []int64{10, 25, 30, 50}},
	}
	for _, tt := range tests {
		if got := rowOptions(tt.retained, tt.current); !slices.Equal(got, tt.want) {
			t.Errorf("rowOptions(%d, %d) = %v, want %v", tt.retained, tt.current, got, tt.want)
		}
	}
}

// A metadata value the pack calls a time becomes one shown in the
// browser's zone; any other value, or one that does not parse, stays as
// read.
func TestMetaCell(t *testing.T) {
	tests := []struct {
		meaning, v string
		want       views.MetaCell
	}{
		{schema.MetaEpochMs, "1748736000123", views.MetaCell{Text: "2025-06-01 00:00:00 UTC", Time: true}},
		{schema.MetaEpochMs, "soon", views.MetaCell{Text: "soon"}},
		{schema.MetaEpochMs, "", views.MetaCell{Text: "—"}},
		{schema.MetaEpochMs, "2025-06-01 00:00:00 UTC", views.MetaCell{Text: "2025-06-01 00:00:00 UTC"}},
		{schema.MetaDurationMs, "61500", views.MetaCell{Text: "1m 1s"}},
		{schema.MetaCount, "1234", views.MetaCell{Text: "1,234"}},
		{"", "1748736000123", views.MetaCell{Text: "1748736000123"}},
	}
	for _, tt := range tests {
		if got := metaCell(tt.meaning, tt.v); got != tt.want {
			t.Errorf("metaCell(%q, %q) = %+v, want %+v", tt.meaning, tt.v, got, tt.want)
		}
	}
}
