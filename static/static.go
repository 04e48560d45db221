// Package static embeds the built CSS, vendored JavaScript and images, so the
// binary serves them without Node or files on disk.
package static

import "embed"

// FS holds css/, vendor/ and img/.
//
//go:embed css vendor img
var FS embed.FS
