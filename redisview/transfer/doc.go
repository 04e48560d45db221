// Package transfer is export and import in JSON Lines: one object per
// key (its name, type, TTL and value typed per Redis type), the bounded
// reader that produces one (values read in pages: HSCAN/SSCAN with COUNT,
// ZRANGE/LRANGE by index, XRANGE with COUNT; a key above a cap is skipped
// and the line says so), the writer that queues one key into a MULTI
// (DEL, the writes, PEXPIRE), and the classification of an import's keys
// against a database (new, overwritten, identical).
//
// The format is documented in docs/export-format.md. Names and values are
// bytes: text when they are valid UTF-8, else {"b64": …}, so that a line
// carries any key byte-exact. Values of sensitive families are never
// read: their line names the key, type and TTL, and says the value was
// withheld.
package transfer
