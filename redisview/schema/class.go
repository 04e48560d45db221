package schema

import "fmt"

// reasons: some key formats are only recognisable by their shape (vertique's
// 8 + 64 hex digits), and a narrow class on one placeholder tells the
// extractor where a neighbouring free-text placeholder (a username with
// colons in it) ends.
type Class uint8

const (
	ClassAny       Class = iota // any byte, including ':', spaces, UTF-8, HTML
	ClassSegment                // any byte except ':'
	ClassDigits                 // 0-9
	ClassHex                    // 0-9 a-f (lower case, as Go, Java and Redis tooling print it)
	ClassAlnum                  // A-Z a-z 0-9
	ClassUpper                  // A-Z 0-9 _ (enum constants, HTTP methods)
	ClassBase64                 // A-Z a-z 0-9 + / - _ =, decoded; standard or URL-safe, padded or not; Key encodes std, padded
	ClassBase64URL              // same bytes and decoding; URL-safe, padded or not; Key encodes URL-safe, unpadded
	numClasses
)

var classNames = [numClasses]string{"any", "segment", "digits", "hex", "alnum", "upper", "base64", "base64url"}

// classBytes[c] is a 256-bit membership set.
var classBytes [numClasses][4]uint64

func init() {
	set := func(c Class, ok func(b byte) bool) {
		for i := range 256 {
			if ok(byte(i)) {
				classBytes[c][i/64] |= 1 << (i % 64)
			}
		}
	}
	digit := func(b byte) bool { return b >= '0' && b <= '9' }
	upper := func(b byte) bool { return b >= 'A' && b <= 'Z' }
	lower := func(b byte) bool { return b >= 'a' && b <= 'z' }
	set(ClassAny, func(byte) bool { return true })
	set(ClassSegment, func(b byte) bool { return b != ':' })
	set(ClassDigits, digit)
	set(ClassHex, func(b byte) bool { return digit(b) || (b >= 'a' && b <= 'f') })
	set(ClassAlnum, func(b byte) bool { return digit(b) || upper(b) || lower(b) })
	set(ClassUpper, func(b byte) bool { return digit(b) || upper(b) || b == '_' })
	b64 := func(b byte) bool {
		return digit(b) || upper(b) || lower(b) || b == '+' || b == '/' || b == '-' || b == '_' || b == '='
	}
	set(ClassBase64, b64)
	set(ClassBase64URL, b64)
}

func (c Class) String() string {
	if c < numClasses {
		return classNames[c]
	}
	return fmt.Sprintf("Class(%d)", c)
}

func (c Class) accepts(b byte) bool { return classBytes[c][b/64]&(1<<(b%64)) != 0 }

// Decodes reports whether Match returns this placeholder's value decoded.
func (c Class) Decodes() bool { return c == ClassBase64 || c == ClassBase64URL }
