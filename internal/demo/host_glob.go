package demo

// globMatch is Redis's stringmatchlen: * ? [abc] [^a-z] and \ escapes,
// byte by byte, optionally ignoring ASCII case.
func globMatch(pat, s string, nocase bool) bool {
	lower := func(b byte) byte {
		if nocase && b >= 'A' && b <= 'Z' {
			return b + 'a' - 'A'
		}
		return b
	}
	for len(pat) > 0 {
		switch pat[0] {
		case '*':
			for len(pat) > 1 && pat[1] == '*' {
				pat = pat[1:]
			}
			if len(pat) == 1 {
				return true
			}
			for i := 0; i <= len(s); i++ {
				if globMatch(pat[1:], s[i:], nocase) {
					return true
				}
			}
			return false
		case '?':
			if len(s) == 0 {
				return false
			}
			s = s[1:]
		case '[':
			if len(s) == 0 {
				return false
			}
			pat = pat[1:]
			not := len(pat) > 0 && pat[0] == '^'
			if not {
				pat = pat[1:]
			}
			match := false
			for len(pat) > 0 && pat[0] != ']' {
				switch {
				case pat[0] == '\\' && len(pat) >= 2:
					pat = pat[1:]
					match = match || lower(pat[0]) == lower(s[0])
				case len(pat) >= 3 && pat[1] == '-':
					lo, hi := lower(pat[0]), lower(pat[2])
					if lo > hi {
						lo, hi = hi, lo
					}
					c := lower(s[0])
					match = match || c >= lo && c <= hi
					pat = pat[2:]
				default:
					match = match || lower(pat[0]) == lower(s[0])
				}
				pat = pat[1:]
			}
			if not {
				match = !match
			}
			if !match {
				return false
			}
			s = s[1:]
			if len(pat) == 0 {
				return len(s) == 0 // an unclosed [ ends the pattern
			}
		case '\\':
			if len(pat) >= 2 {
				pat = pat[1:]
			}
			fallthrough
		default:
			if len(s) == 0 || lower(pat[0]) != lower(s[0]) {
				return false
			}
			s = s[1:]
		}
		pat = pat[1:]
	}
	return len(s) == 0
}
