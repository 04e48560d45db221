package views

import (
	"net/url"
	"unicode/utf8"
)

// A form field carries text the browser may change: it decodes the page as
// UTF-8 (an invalid byte becomes U+FFFD), drops NUL and turns line breaks
// into CRLF. A key that would not survive travels query-escaped in "kq"
// instead of "k" (handlers accept either), so GET forms stay byte-exact.
func keyFieldName(key string) string {
	if formSafe(key) {
		return "k"
	}
	return "kq"
}

func keyFieldValue(key string) string {
	if formSafe(key) {
		return key
	}
	return url.QueryEscape(key)
}

func formSafe(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return false
		}
	}
	return true
}
