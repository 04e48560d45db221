package demo

import (
	"strings"
	"unicode/utf8"
)

// scanMatchArgs makes the MATCH pattern of a SCAN-family command one
// miniredis can compile: it turns the pattern into a Go regexp, which
// refuses bytes that are not UTF-8 — and panics, taking the process down,
// where Redis matches bytes. Each invalid byte becomes ?, which matches
// that byte (and any other character there): the reply holds every key
// Redis would return, and a few it would not, which Keydeck's callers
// check against their own globs anyway.
func scanMatchArgs(cmd string, args []string) []string {
	switch cmd {
	case "SCAN", "HSCAN", "SSCAN", "ZSCAN":
	default:
		return args
	}
	for i := 0; i+1 < len(args); i++ {
		if !strings.EqualFold(args[i], "MATCH") || utf8.ValidString(args[i+1]) {
			continue
		}
		out := append([]string(nil), args...)
		out[i+1] = validPattern(args[i+1])
		return out
	}
	return args
}

// validPattern replaces each byte of p that is not UTF-8 by ? (an escape
// before it dropped: \? would match a literal ?).
func validPattern(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); {
		r, n := utf8.DecodeRuneInString(p[i:])
		switch {
		case r == '\\' && i+1 < len(p):
			if r2, n2 := utf8.DecodeRuneInString(p[i+1:]); r2 == utf8.RuneError && n2 == 1 {
				b.WriteByte('?')
				i += 2
				continue
			}
			_, n2 := utf8.DecodeRuneInString(p[i+1:])
			b.WriteString(p[i : i+1+n2])
			i += 1 + n2
			continue
		case r == utf8.RuneError && n == 1:
			b.WriteByte('?')
		default:
			b.WriteString(p[i : i+n])
		}
		i += n
	}
	return b.String()
}
