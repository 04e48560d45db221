package route

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// UnescapeName is the inverse of the pages' display form of a Redis name
// (views.EscapeName): \xNN is the byte NN, \n \r \t the control
// characters, \\ a backslash, \uXXXX and \UXXXXXXXX the code point, in
// UTF-8. Anything else after a backslash is refused, as is a \x byte pair
// or code point that is not hexadecimal; every other character stands for
// itself. A name copied from a page and pasted into a form whose argument
// encoding is "escaped" thus arrives as the exact bytes it shows — a
// member with a newline or a byte that is not UTF-8 included, which no
// text field can carry.
func UnescapeName(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		c := s[i]
		if c != '\\' {
			b.WriteByte(c)
			i++
			continue
		}
		if i+1 == len(s) {
			return "", fmt.Errorf("a lone backslash ends it (a backslash is written \\\\)")
		}
		switch e := s[i+1]; e {
		case '\\':
			b.WriteByte('\\')
			i += 2
		case 'n', 'r', 't':
			b.WriteByte(map[byte]byte{'n': '\n', 'r': '\r', 't': '\t'}[e])
			i += 2
		case 'x', 'u', 'U':
			digits := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			if i+2+digits > len(s) {
				return "", fmt.Errorf("\\%c at byte %d wants %d hexadecimal digits", e, i, digits)
			}
			v, err := strconv.ParseUint(s[i+2:i+2+digits], 16, 32)
			if err != nil {
				return "", fmt.Errorf("\\%c at byte %d wants %d hexadecimal digits, not %q", e, i, digits, s[i+2:i+2+digits])
			}
			if e == 'x' {
				b.WriteByte(byte(v))
			} else {
				if v > utf8.MaxRune || v >= 0xd800 && v <= 0xdfff {
					return "", fmt.Errorf("\\%c%s at byte %d is not a code point", e, s[i+2:i+2+digits], i)
				}
				b.WriteRune(rune(v))
			}
			i += 2 + digits
		default:
			return "", fmt.Errorf("\\%c at byte %d is not an escape (\\xNN, \\n, \\r, \\t, \\\\, \\uXXXX or \\UXXXXXXXX)", e, i)
		}
	}
	return b.String(), nil
}
