package schema

import "strings"

// globSpecial are the bytes a Redis glob (SCAN, HSCAN, SSCAN and ZSCAN
// MATCH, KEYS) reads as pattern: '^' and '-' are special only inside
// brackets, which an escaped '[' never opens.
const globSpecial = `*?[]\`

// EscapeGlob makes s match itself, byte for byte, in a Redis glob: each
// special byte gets a backslash. It works on bytes, so a name that is not
// valid UTF-8 is carried unchanged.
func EscapeGlob(s string) string {
	n := 0
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(globSpecial, s[i]) >= 0 {
			n++
		}
	}
	if n == 0 {
		return s
	}
	b := make([]byte, 0, len(s)+n)
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(globSpecial, s[i]) >= 0 {
			b = append(b, '\\')
		}
		b = append(b, s[i])
	}
	return string(b)
}
