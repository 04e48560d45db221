package route

import "net/url"

// Paths of export and import (issue 22).
const (
	// Export streams a database's keys as JSON Lines: one key (?key=K),
	// a family's (?family=ID) or a glob's (?pattern=GLOB).
	Export = "/c/:conn/db/:db/export"
)

// ExportPath is a database's export, without parameters.
func ExportPath(conn string, db int) string { return DatabaseURL(conn, db) + "/export" }

// ExportKeyURL exports one key (bytes, carried exactly).
func ExportKeyURL(conn string, db int, key string) string {
	return ExportPath(conn, db) + "?key=" + url.QueryEscape(key)
}

// ExportFamilyURL exports a family's keys.
func ExportFamilyURL(conn string, db int, family string) string {
	return ExportPath(conn, db) + "?family=" + url.QueryEscape(family)
}

// ExportPatternURL exports the keys a glob matches.
func ExportPatternURL(conn string, db int, glob string) string {
	return ExportPath(conn, db) + "?pattern=" + url.QueryEscape(glob)
}
