package handlers

import (
	"slices"
	"testing"
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
