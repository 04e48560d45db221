package console

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Quote writes one argument so that Split reads it back byte for byte,
// the way redis-cli shows a bulk string: in double quotes, with \n, \r,
// \t, \a, \b, \\ and \" escaped and every byte that is not printable
// ASCII as \xHH. Valid UTF-8 beyond ASCII is kept as it is (Keydeck's
// pages are UTF-8); an invalid byte is escaped.
func Quote(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		switch c {
		case '\\':
			b.WriteString(`\\`)
		case '"':
			b.WriteString(`\"`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\a':
			b.WriteString(`\a`)
		case '\b':
			b.WriteString(`\b`)
		default:
			if c >= 0x20 && c < 0x7f {
				b.WriteByte(c)
				break
			}
			if c >= utf8.RuneSelf {
				if r, n := utf8.DecodeRuneInString(s[i:]); r != utf8.RuneError && unicode.IsPrint(r) {
					b.WriteString(s[i : i+n])
					i += n
					continue
				}
			}
			const hex = "0123456789abcdef"
			b.WriteString(`\x`)
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
		i++
	}
	b.WriteByte('"')
	return b.String()
}
