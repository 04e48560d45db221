package bans

import "testing"

func TestDecideAndWords(t *testing.T) {
	for _, tt := range []struct {
		hit, inSet bool
		want       Verdict
		ban, other string
	}{
		{true, true, Listed, "banned", "present"},
		{false, false, NotListed, "not banned", "absent"},
		{true, false, FalsePositive, "bloom says maybe, set says no: not banned — false positive", "bloom says maybe, set says no: absent — false positive"},
		{false, true, Missed, "in the set, but the bloom says no: not banned — the application never asks the set for it (its bloom bits are missing)",
			"in the set, but the bloom says no: absent — the application never asks the set for it (its bloom bits are missing)"},
	} {
		v := Decide(tt.hit, tt.inSet)
		if v != tt.want || Words(v, true) != tt.ban || Words(v, false) != tt.other {
			t.Errorf("hit %v, in set %v: %s %q %q", tt.hit, tt.inSet, v, Words(v, true), Words(v, false))
		}
	}
}
