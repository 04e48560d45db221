package schema

import (
	"fmt"
	"testing"
)

func sampleOf(pack string) []Key {
	var out []Key
	for _, tc := range keyCases {
		if tc.pack == pack {
			out = append(out, Key{tc.db, tc.key})
		}
	}
	return out
}

func TestBestPack(t *testing.T) {
	packs := Builtin()
	noise := func(n int) []Key {
		var out []Key
		for i := range n {
			out = append(out, Key{i % 16, fmt.Sprintf("sess:%d:%x", i, i*7919)})
		}
		return out
	}
	cases := []struct {
		name      string
		sample    []Key
		want      string // "" for no pack
		wantShare float64
	}{
		{"eisland", append(sampleOf("eisland"), noise(20)...), "eisland", 0},
		{"gateway", append(sampleOf("gateway"), noise(5)...), "gateway", 0},
		{"vertique", append(sampleOf("vertique"), noise(2)...), "vertique", 0},
		// eIsland keys written to the wrong databases are not eIsland's.
		{"eisland keys in db 15", func() []Key {
			var out []Key
			for _, k := range sampleOf("eisland") {
				out = append(out, Key{15, k.Name})
			}
			return out
		}(), "", 0},
		{"mostly unrelated", append(sampleOf("gateway")[:2], noise(40)...), "", 2.0 / 42},
		{"nothing", noise(50), "", 0},
		{"empty", nil, "", 0},
	}
	for _, tc := range cases {
		p, s := BestPack(packs, tc.sample)
		got := ""
		if p != nil {
			got = p.Name
		}
		if got != tc.want {
			t.Errorf("%s: chose %q (%d/%d), want %q", tc.name, got, s.Matched, s.Total, tc.want)
		}
		if tc.want != "" && (s.Pack != p || s.Share() < MinShare) {
			t.Errorf("%s: score %+v", tc.name, s)
		}
		if tc.wantShare != 0 && s.Share() != tc.wantShare {
			t.Errorf("%s: share %v, want %v", tc.name, s.Share(), tc.wantShare)
		}
	}

	// The eIsland sample must score far better with eisland than with the
	// others: a pack choice by margin, not by luck.
	sample := sampleOf("eisland")
	for _, p := range packs {
		s := Score(p, sample)
		if p.Name == "eisland" && s.Share() != 1 || p.Name != "eisland" && s.Share() > 0.05 {
			t.Errorf("%s scores %d/%d on the eIsland sample", p.Name, s.Matched, s.Total)
		}
	}

	// Two packs explaining the same keys: no guess.
	twin, err := BuiltinPack("gateway").With(nil)
	if err != nil {
		t.Fatal(err)
	}
	if p, s := BestPack([]*Pack{BuiltinPack("gateway"), twin}, sampleOf("gateway")); p != nil || s.Matched == 0 {
		t.Errorf("tie: chose %v (%+v)", p, s)
	}
}
