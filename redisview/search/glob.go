package search

import "strings"

// HasWildcard reports an unescaped *, ? or [ (Redis glob syntax).
func HasWildcard(q string) bool {
	for i := 0; i < len(q); i++ {
		switch q[i] {
		case '\\':
			i++
		case '*', '?', '[':
			return true
		}
	}
	return false
}

// unescape removes the backslash before a glob character, so "a\*b"
// searches the value "a*b"; other backslashes are the value's own.
func unescape(q string) string {
	if !strings.Contains(q, `\`) {
		return q
	}
	var b strings.Builder
	for i := 0; i < len(q); i++ {
		if q[i] == '\\' && i+1 < len(q) && strings.IndexByte(`*?[]\`, q[i+1]) >= 0 {
			i++
		}
		b.WriteByte(q[i])
	}
	return b.String()
}

// literalPrefix is the unescaped text of a glob before its first *.
func literalPrefix(glob string) string {
	var b strings.Builder
	for i := 0; i < len(glob); i++ {
		switch glob[i] {
		case '\\':
			if i+1 < len(glob) {
				i++
				b.WriteByte(glob[i])
			}
		case '*', '?', '[':
			return b.String()
		default:
			b.WriteByte(glob[i])
		}
	}
	return b.String()
}

// GlobMatch reports whether s matches a Redis glob (*, ?, [abc], [^a-z],
// \ escapes), as SCAN MATCH decides. It backtracks only to the last *, so
// it costs O(len(glob) × len(s)) at worst, whatever the key.
func GlobMatch(glob, s string) bool {
	gi, si := 0, 0
	star, mark := -1, 0
	for si < len(s) {
		if gi < len(glob) && glob[gi] == '*' {
			star, mark = gi, si
			gi++
			continue
		}
		if gi < len(glob) {
			if n, ok := one(glob[gi:], s[si]); ok {
				gi += n
				si++
				continue
			}
		}
		if star < 0 {
			return false
		}
		mark++
		gi, si = star+1, mark
	}
	for gi < len(glob) && glob[gi] == '*' {
		gi++
	}
	return gi == len(glob)
}

// one matches the glob element at the start of g against c: it returns the
// element's length and whether c matches it.
func one(g string, c byte) (int, bool) {
	switch g[0] {
	case '?':
		return 1, true
	case '\\':
		if len(g) >= 2 {
			return 2, g[1] == c
		}
		return 1, c == '\\'
	case '[':
		i := 1
		not := i < len(g) && g[i] == '^'
		if not {
			i++
		}
		match := false
		for i < len(g) && g[i] != ']' {
			switch {
			case g[i] == '\\' && i+1 < len(g):
				match = match || g[i+1] == c
				i += 2
			case i+2 < len(g) && g[i+1] == '-' && g[i+2] != ']':
				lo, hi := g[i], g[i+2]
				if lo > hi {
					lo, hi = hi, lo
				}
				match = match || (c >= lo && c <= hi)
				i += 3
			default:
				match = match || g[i] == c
				i++
			}
		}
		if i < len(g) {
			i++ // the ]
		}
		return i, match != not
	}
	return 1, g[0] == c
}
