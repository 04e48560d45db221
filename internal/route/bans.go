package route

import (
	"net/url"
	"strconv"
)

// BansRebuild builds a ban list's bloom aside from its set and previews
// swapping it in (admin).
const BansRebuild = "/c/:conn/bans/rebuild"

// BansRebuildURL is where the rebuild form posts.
func BansRebuildURL(conn string) string { return BansURL(conn) + "/rebuild" }

// MaxCheckName bounds a name checked on the bans page.
const MaxCheckName = 64 << 10

// BansQuery is the bans page's parameters: a name to check, and the page
// of one list's members (its bloom family id, a substring filter, an SSCAN
// cursor).
type BansQuery struct {
	Conn   string
	Check  string
	List   string
	Filter string
	Cursor uint64
}

// Values are the query's parameters, canonical (empty ones left out).
func (q BansQuery) Values() url.Values {
	v := url.Values{}
	if q.Check != "" {
		v.Set("check", q.Check)
	}
	if q.List != "" {
		v.Set("list", q.List)
	}
	if q.Filter != "" {
		v.Set("filter", q.Filter)
	}
	if q.Cursor != 0 {
		v.Set("cursor", strconv.FormatUint(q.Cursor, 10))
	}
	return v
}

// URL is the bans page with these parameters (bytes carried exactly).
func (q BansQuery) URL() string {
	if e := q.Values().Encode(); e != "" {
		return BansURL(q.Conn) + "?" + e
	}
	return BansURL(q.Conn)
}

// ParseBansQuery reads the bans page's parameters.
func ParseBansQuery(conn string, v url.Values) (BansQuery, error) {
	q := BansQuery{Conn: conn, Check: v.Get("check"), List: v.Get("list"), Filter: v.Get("filter")}
	if len(q.Check) > MaxCheckName || len(q.Filter) > MaxCheckName {
		return BansQuery{}, badParam("a name to check or filter by is at most %d bytes", MaxCheckName)
	}
	if len(q.List) > 200 {
		return BansQuery{}, badParam("list %q is not a family id", q.List[:200])
	}
	if s := v.Get("cursor"); s != "" {
		c, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return BansQuery{}, badParam("cursor %q is not a number", s)
		}
		q.Cursor = c
	}
	return q, nil
}
