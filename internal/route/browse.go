package route

import (
	"net/url"
	"strings"
)

// Paths of the key lists and the search (issue 11).
const (
	// Keys lists one database's keys of a family (?family=ID) or, for keys
	// no family matches, of one prefix (?prefix=P), page by page.
	Keys = "/c/:conn/db/:db/keys"
	// Search finds keys across every database of a connection (?q=…).
	Search = "/c/:conn/search"
)

// KeysPath is the key list of one database, without parameters.
func KeysPath(conn string, db int) string { return DatabaseURL(conn, db) + "/keys" }

// FamilyKeysURL lists a database's keys of one family.
func FamilyKeysURL(conn string, db int, family string) string {
	return KeysPath(conn, db) + "?family=" + url.QueryEscape(family)
}

// PrefixKeysURL lists a database's keys that match no family and start
// with prefix (bytes, carried exactly).
func PrefixKeysURL(conn string, db int, prefix string) string {
	return KeysPath(conn, db) + "?prefix=" + url.QueryEscape(prefix)
}

// SearchPath is the search page of a connection, without a query.
func SearchPath(conn string) string { return OverviewURL(conn) + "/search" }

// SearchURL searches a connection for q (bytes, carried exactly).
func SearchURL(conn, q string) string {
	if strings.TrimSpace(q) == "" {
		return SearchPath(conn)
	}
	return SearchPath(conn) + "?q=" + url.QueryEscape(q)
}
