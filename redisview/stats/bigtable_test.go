package stats

import "testing"

// The estimate of a big hash table counts, per element, its strings as
// jemalloc allocates them, a 24-byte dict entry and 8 bytes of bucket per
// slot (slots: the power of two at or above the element count).
func TestTableMemory(t *testing.T) {
	for _, tc := range []struct {
		name string
		typ  string
		n    int64
		lens []int64
		want int64
	}{
		// "member:0000001": 14 bytes → sds 16 → class 16; +24 entry = 40 per member; 16384 slots.
		{"set of short members", "set", 10000, []int64{14, 14, 14, 14}, 72 + 10000*40 + 8*16384},
		// field 8 → 10 → 16; value 40 → 44 → 48: 64 + 24 = 88 per field; 2^20 slots.
		{"hash", "hash", 1_000_000, []int64{8, 40, 8, 40}, 72 + 1_000_000*88 + 8*(1<<20)},
		// a 5-byte field: sds 7 → class 8; a 300-byte value: sds 306 → class 320 (256 + 64).
		{"hash with long values", "hash", 20000, []int64{5, 300}, 72 + 20000*(8+320+24) + 8*32768},
		{"odd sample of a hash uses whole pairs", "hash", 20000, []int64{5, 300, 7}, 72 + 20000*(8+320+24) + 8*32768},
		{"no sample", "set", 20000, nil, 0},
		{"empty", "hash", 0, []int64{1, 1}, 0},
	} {
		if got := tableMemory(tc.typ, tc.n, tc.lens); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestJemallocClass(t *testing.T) {
	for _, tc := range []struct{ in, want int64 }{
		{1, 8}, {8, 8}, {9, 16}, {16, 16}, {17, 32}, {128, 128}, {129, 160}, {160, 160}, {161, 192}, {306, 320}, {1000, 1024}, {1025, 1280},
	} {
		if got := jemallocClass(tc.in); got != tc.want {
			t.Errorf("jemallocClass(%d) = %d, want %d", tc.in, got, tc.want)
		}
	}
}
