package bans

import (
	"errors"
	"testing"
)

// TestWidespreadNeedsEnoughMembers: "most members lack bits" (the scheme
// is suspect, ban and unban stop) is judged on a complete pass of enough
// members, never on one member of a tiny set nor on the first pages of a
// running pass.
func TestWidespreadNeedsEnoughMembers(t *testing.T) {
	for _, tc := range []struct {
		name         string
		checked, bad int64
		complete     bool
		want         bool
	}{
		{"one member, added by hand", 1, 1, true, false},
		{"three of five", 5, 3, true, false},
		{"seven of seven", 7, 7, true, false},
		{"two of eight", 8, 2, true, false},
		{"five of eight", 8, 5, true, true},
		{"nine of ten", 10, 9, true, true},
		{"half of twenty", 20, 10, true, false},
		{"a wrong scheme", 5000, 4990, true, true},
		{"first member of a running pass", 1, 1, false, false},
		{"first pages of a running pass", 250, 240, false, false},
		{"none checked", 0, 0, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Consistency{Checked: tc.checked, Bad: tc.bad, Complete: tc.complete}
			st := Status{Current: c}
			if tc.complete {
				st = Status{Last: c}
			}
			if got := st.Widespread(); got != tc.want {
				t.Errorf("%d of %d members lacking bits (complete pass: %v): widespread %v, want %v", tc.bad, tc.checked, tc.complete, got, tc.want)
			}
			if got := widespread(tc.bad, tc.checked); tc.complete && got != tc.want {
				t.Errorf("a sample of %d with %d lacking bits: widespread %v, want %v", tc.checked, tc.bad, got, tc.want)
			}
		})
	}
}

// TestNeededRefusesWhatBuildRefuses: the undo of set-bloom-bits reads the
// set under the rebuild's bound; a bloom too large to rebuild is refused
// before anything is read.
func TestNeededRefusesWhatBuildRefuses(t *testing.T) {
	l := List{SetKey: "s", BloomKey: "b", Bits: (MaxBloomBytes + 1) * 8, Hashes: 6}
	if _, err := Build(t.Context(), nil, l); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Build: %v, want ErrTooLarge", err)
	}
	if _, _, err := Needed(t.Context(), nil, l, []int64{1}, "x"); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Needed: %v, want ErrTooLarge", err)
	}
}
