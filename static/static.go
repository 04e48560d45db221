// Package static embeds the built CSS, vendored JavaScript, Keydeck's own
// script and images, so the binary serves them without Node or files on disk.
package static

import "embed"

// FS holds css/, vendor/, js/ and img/.
//
//go:embed css vendor js img
var FS embed.FS
