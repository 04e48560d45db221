package views

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/keydeck/keydeck/internal/route"
)

// Redis names — keys, members, hash fields — are arbitrary bytes written by
// whoever can reach Redis. Shown raw, a name that is not UTF-8 makes a page
// or websocket frame that browsers refuse (Chromium drops the frame and the
// view stops updating), a control or bidi character hides what the name
// really is, and a 1 MB name makes a 1 MB row. Every view shows them
// through one formatter: escaped the way redis-cli quotes them, and cut
// short in lists. Links carry names byte-exact (url.QueryEscape), never
// this display form.

const (
	// nameShown is how many characters of a name lists show; the full
	// escaped name is on the key page.
	nameShown = 120
	// MaxLinkedName is the longest name (in bytes) that links carry
	// (route.MaxLinkedName). Longer names are shown cut short and
	// unlinked; the key page accepts up to 64 KiB typed into its lookup.
	MaxLinkedName = route.MaxLinkedName
)

// EscapeName is the full display form of a Redis name: bytes that are not
// UTF-8 as \xNN, control and invisible formatting characters (bidi
// overrides, zero-width spaces) escaped, and the backslash doubled so an
// escape is never ambiguous with the same characters typed in a name.
// route.UnescapeName reads it back.
func EscapeName(s string) string {
	out, _ := escapeName(s, -1)
	return out
}

// ShortName is EscapeName cut to nameShown characters; cut reports whether
// anything was left off.
func ShortName(s string) (short string, cut bool) { return escapeName(s, nameShown) }

// Linkable reports whether a link may carry the name (see MaxLinkedName).
func Linkable(name string) bool { return route.Linkable(name) }

// escapeName escapes s, stopping after limit output characters (limit < 0:
// no limit). It reads only as much of s as it shows, so cutting a 1 MB name
// costs what the cut costs.
func escapeName(s string, limit int) (string, bool) {
	if limit < 0 || len(s) <= limit {
		if plain(s) {
			return s, false
		}
	}
	var b strings.Builder
	shown := 0
	for i := 0; i < len(s); {
		if limit >= 0 && shown >= limit {
			return b.String(), true
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\x`)
			b.WriteString(hex2(s[i]))
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x80 && !strconv.IsPrint(r):
			b.WriteString(`\x`)
			b.WriteString(hex2(byte(r)))
		case r != ' ' && !strconv.IsPrint(r):
			// Invisible or layout-changing code points: C1 controls, bidi
			// overrides, zero-width and non-ASCII spaces, line separators.
			// \uXXXX, or \UXXXXXXXX past U+FFFF: a fixed count of
			// digits, so the character after it is never read as one.
			esc, digits := `\u`, 4
			if r > 0xffff {
				esc, digits = `\U`, 8
			}
			b.WriteString(esc)
			h := strconv.FormatInt(int64(r), 16)
			for range digits - len(h) {
				b.WriteByte('0')
			}
			b.WriteString(h)
		default:
			b.WriteString(s[i : i+size])
		}
		shown++
		i += size
	}
	return b.String(), false
}

// plain reports a name that displays as itself: printable ASCII without
// a backslash (the common case, kept allocation-free).
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '\\' {
			return false
		}
	}
	return true
}

func hex2(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&0xf]})
}

// ValidText makes free text that may carry Redis bytes (an error that
// quotes a key, an INFO value) valid UTF-8, showing each invalid byte as
// \xNN. Unlike EscapeName it leaves everything else alone: the text is
// prose, not a name someone needs to tell apart from another.
func ValidText(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteString(`\x`)
			b.WriteString(hex2(s[i]))
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}
