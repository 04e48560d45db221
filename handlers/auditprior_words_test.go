package handlers

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/keydeck/keydeck/redisview/action"
)

func TestPriorWords(t *testing.T) {
	t.Parallel()
	dump := base64.StdEncoding.EncodeToString(make([]byte, 1229))
	for _, tc := range []struct {
		name string
		t    action.Target
		want string
	}{
		{"dump", action.Target{Key: "k", Type: "hash", Size: 2, Unit: "fields", Prior: dump}, "DUMP of 1.2 KiB (hash, 2 fields)"},
		{"dump of one member", action.Target{Key: "k", Type: "set", Size: 1, Prior: base64.StdEncoding.EncodeToString([]byte("abcde"))}, "DUMP of 5 B (set, 1 member)"},
		{"sensitive", action.Target{Key: "k", Type: "string", Sensitive: true, Prior: action.PriorSensitive}, "sensitive: not recorded"},
		{"sensitive marker only", action.Target{Key: "k", Prior: action.PriorSensitive}, "sensitive: not recorded"},
		{"snapshot", action.Target{Key: "k", Type: "hash", Snapshot: &action.Snapshot{Type: "hash", Elems: []string{"score", "4096"}}}, `hash of 1 field: "score"="4096"`},
		{"absent", action.Target{Key: "k", Type: "none", PTTL: -2}, "absent"},
		{"zset member", action.Target{Key: "k", Member: &action.MemberState{Name: "ann", Present: true, Score: "1e+06"}}, "score 1,000,000"},
		{"zset member infinite", action.Target{Key: "k", Member: &action.MemberState{Name: "ann", Present: true, Score: "-Inf"}}, "score -inf"},
		{"zset member absent", action.Target{Key: "k", Member: &action.MemberState{Name: "ann"}}, "not on the sorted set"},
		{"set member", action.Target{Key: "k", Member: &action.MemberState{Kind: action.PartSMember, Name: "ann", Present: true}}, "a member of the set"},
		{"hash field", action.Target{Key: "k", Member: &action.MemberState{Kind: action.PartHField, Name: "f", Present: true, Value: "v\xff"}}, `field value "v\xff"`},
		{"long hash field", action.Target{Key: "k", Member: &action.MemberState{Kind: action.PartHField, Name: "f", Present: true, Value: strings.Repeat("x", 100)}}, `field value "` + strings.Repeat("x", 60) + `"…`},
		{"bits", action.Target{Key: "k", Member: &action.MemberState{Kind: action.PartBits, Name: "ann", Offsets: []int64{5, 1048576}, Bits: "10", Present: true}}, "bits 10 at offsets 5, 1,048,576"},
	} {
		if got := priorWords(tc.t); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	rec := action.Record{Phase: action.PhaseIntent, Targets: []action.Target{
		{Key: "a", PTTL: 3_600_000, Type: "string", Prior: "AAAA"},
		{Key: "b", PTTL: -1, Member: &action.MemberState{Name: "m", Present: true, Score: "3"}},
		{Key: "c", PTTL: -2, Type: "none"},
	}}
	got := priorTargets(rec)
	if len(got) != 3 || got[0].TTL != "TTL 1h" || got[1].TTL != "no TTL" || got[1].Part != "m" || got[2].TTL != "" || got[2].Prior != "absent" {
		t.Errorf("priorTargets = %+v", got)
	}
	rec.Phase = action.PhaseOutcome
	if got := priorTargets(rec); len(got) != 0 {
		t.Errorf("an outcome record shows prior state: %+v", got)
	}
}
