package views

import (
	"context"
	"io"

	"github.com/a-h/templ"
)

// Wrapped writes a name's display form (EscapeName's, or any text) with a
// line-break opportunity (<wbr>) after each run of separators — : / - . _ —
// so that a long name wraps between its parts ("user:ban:" / "xiaoming"),
// never inside one. Copying the name copies no extra character: <wbr> is
// not text. A part longer than its box still needs the container's
// break-words, the last resort.
func Wrapped(s string) templ.Component {
	return templ.ComponentFunc(func(_ context.Context, w io.Writer) error {
		for i, part := range wrapParts(s) {
			if i > 0 {
				if _, err := io.WriteString(w, "<wbr>"); err != nil {
					return err
				}
			}
			if _, err := io.WriteString(w, templ.EscapeString(part)); err != nil {
				return err
			}
		}
		return nil
	})
}

// wrapParts cuts s after each run of separators that something follows.
func wrapParts(s string) []string {
	var parts []string
	start := 0
	for i := 0; i < len(s); i++ {
		if wrapSep(s[i]) && i+1 < len(s) && !wrapSep(s[i+1]) {
			parts = append(parts, s[start:i+1])
			start = i + 1
		}
	}
	return append(parts, s[start:])
}

func wrapSep(c byte) bool { return c == ':' || c == '/' || c == '-' || c == '.' || c == '_' }
