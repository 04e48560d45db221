package route

import "net/url"

// SearchContinueURL continues a search: q again, and the scans' cursors
// (search.Result.Cursors) as ?cont=.
func SearchContinueURL(conn, q, cursors string) string {
	return SearchURL(conn, q) + "&cont=" + url.QueryEscape(cursors)
}
