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

// Import is a database's import: GET the upload form, POST the file
// (multipart, the CSRF token in the query) for its preview.
// ImportStart confirms a previewed import (POST).
const (
	Import      = "/c/:conn/db/:db/import"
	ImportStart = "/c/:conn/db/:db/import/:id/start"
)

// ImportURL is a database's import page.
func ImportURL(conn string, db int) string { return DatabaseURL(conn, db) + "/import" }

// ImportStartURL confirms the previewed import id.
func ImportStartURL(conn string, db int, id string) string {
	return ImportURL(conn, db) + "/" + url.PathEscape(id) + "/start"
}
