package redisview

import (
	"hash/crc32"
	"unicode/utf16"
)

// BloomPositions returns the k bit offsets an item occupies in a bits-wide
// bitmap bloom filter, using the double-hashing scheme pinned in DESIGN.md:
// pos_i = floorMod(crc32(utf8(item)) + i*javaHashCode(item), bits).
//
// The arithmetic is signed 64-bit on purpose: that is what the Java
// application computes (a long CRC plus an int hash widened to long), so a
// negative hashCode walks the positions downwards and floorMod folds them
// back into range. Any other reading sets bits the application never checks.
func BloomPositions(item string, bits int64, k int) []int64 {
	if bits <= 0 || k <= 0 {
		return nil
	}
	h1 := int64(crc32.ChecksumIEEE([]byte(item)))
	h2 := int64(JavaHashCode(item))
	out := make([]int64, k)
	for i := range k {
		out[i] = floorMod(h1+int64(i)*h2, bits)
	}
	return out
}

// JavaHashCode is Java's String.hashCode: s[0]*31^(n-1) + … + s[n-1] over
// UTF-16 code units, wrapping at 32 bits. Characters outside the BMP count as
// two units (a surrogate pair), exactly as the JVM sees them.
func JavaHashCode(s string) int32 {
	var h int32
	for _, r := range s {
		if r1, r2 := utf16.EncodeRune(r); r1 != '\uFFFD' || r2 != '\uFFFD' {
			h = 31*h + int32(r1)
			h = 31*h + int32(r2)
			continue
		}
		h = 31*h + int32(r)
	}
	return h
}

func floorMod(x, m int64) int64 {
	r := x % m
	if r < 0 {
		r += m
	}
	return r
}
