package redisview

import (
	"slices"
	"testing"
)

// The expected values were computed independently of this Go code, with
// Python's zlib.crc32 and a UTF-16 hashCode loop. Re-check with:
//
//	import zlib
//	def java_hash(s):
//	    b = s.encode('utf-16-be'); h = 0
//	    for i in range(0, len(b), 2):
//	        h = (31*h + int.from_bytes(b[i:i+2], 'big')) & 0xffffffff
//	    return h - (1 << 32) if h >= 1 << 31 else h
//	def positions(item, bits, k):
//	    c, h = zlib.crc32(item.encode('utf-8')), java_hash(item)
//	    return [(c + i*h) % bits for i in range(k)]  # Python % is floorMod
//	print(java_hash(item), positions(item, bits, k))
func TestBloomPositions(t *testing.T) {
	tests := []struct {
		name string
		item string
		bits int64
		k    int
		hash int32
		want []int64
	}{
		{"ascii app name", "eIsland-desktop", 1_000_003, 6, 737361961,
			[]int64{721578, 81325, 441075, 800825, 160572, 520322}},
		{"ascii short", "hello", 1_000_003, 6, 99162322,
			[]int64{58149, 220174, 382199, 544224, 706249, 868274}},
		{"empty string", "", 1_000_003, 6, 0,
			[]int64{0, 0, 0, 0, 0, 0}},
		{"hashCode is MinInt32", "polygenelubricants", 1_000_003, 6, -2147483648,
			[]int64{744454, 267247, 790043, 312836, 835632, 358425}},
		{"emoji is a surrogate pair, negative hash", "😀 party", 2_000_003, 6, -1562810903,
			[]int64{1984261, 1175701, 367141, 1558584, 750024, 1941467}},
		{"CJK in the BMP", "李雷", 1_000_003, 6, 858473,
			[]int64{452029, 310499, 168969, 27439, 885912, 744382}},
		{"markup and quotes", `<script>alert(1)</script>"'`, 1_000_003, 6, -2046519318,
			[]int64{76966, 563789, 50609, 537432, 24252, 511075}},
		{"negative hash wraps below zero", "ops:admin", 13, 6, -400852857,
			[]int64{9, 7, 5, 3, 1, 12}},
		{"bits wider than 32", "hello", 1<<40 + 15, 3, 99162322,
			[]int64{907060870, 1006223192, 1105385514}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := JavaHashCode(tt.item); got != tt.hash {
				t.Errorf("JavaHashCode(%q) = %d, want %d", tt.item, got, tt.hash)
			}
			if got := BloomPositions(tt.item, tt.bits, tt.k); !slices.Equal(got, tt.want) {
				t.Errorf("BloomPositions(%q, %d, %d) = %v, want %v", tt.item, tt.bits, tt.k, got, tt.want)
			}
		})
	}
}

func TestBloomPositionsDegenerate(t *testing.T) {
	if got := BloomPositions("x", 0, 6); got != nil {
		t.Errorf("zero bits: got %v, want nil", got)
	}
	if got := BloomPositions("x", 100, 0); got != nil {
		t.Errorf("zero k: got %v, want nil", got)
	}
}
