package handlers

import (
	"fmt"
	"net/url"
	"strconv"

	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview/browse"
	"github.com/keydeck/keydeck/views"
)

// keyList names one key list and a page of it: ?family=ID, or ?prefix=P
// for the keys no family matches (with &flat=1, only those with no ':'
// after P: one group of the database page), or ?pattern=GLOB for every
// key SCAN MATCH GLOB finds, and ?at= for a page after the first.
type keyList struct {
	Conn     string
	DB       int
	Family   string
	Prefix   string
	IsPrefix bool
	Flat     bool
	Pattern  string // a glob, bytes as given; "" when not a pattern list
	At       browse.Cursor
}

// parseKeyList reads a key list's query parameters.
func parseKeyList(conn string, db int, q url.Values) (keyList, error) {
	l := keyList{Conn: conn, DB: db, Family: q.Get("family"), Prefix: q.Get("prefix"), IsPrefix: q.Has("prefix")}
	if q.Has("pattern") {
		return parsePatternList(l, q)
	}
	switch {
	case q.Has("family") && l.IsPrefix:
		return keyList{}, fmt.Errorf("%w: a key list is of a family or of a prefix, not both", route.ErrParam)
	case !q.Has("family") && !l.IsPrefix:
		return keyList{}, fmt.Errorf("%w: name a family (?family=ID) or a prefix (?prefix=P)", route.ErrParam)
	case q.Has("family") && l.Family == "":
		return keyList{}, fmt.Errorf("%w: the family is empty", route.ErrParam)
	case q.Has("flat") && (q.Get("flat") != "1" || !l.IsPrefix):
		return keyList{}, fmt.Errorf("%w: flat=1 applies to a prefix list only", route.ErrParam)
	}
	l.Flat = q.Get("flat") == "1"
	at, err := browse.ParseCursor(q.Get("at"))
	if err != nil {
		return keyList{}, fmt.Errorf("%w: %s", route.ErrParam, err.Error())
	}
	l.At = at
	return l, nil
}

// Values are the list's parameters, as its URL and live topic carry them.
func (l keyList) Values() url.Values {
	q := url.Values{"conn": {l.Conn}, "db": {strconv.Itoa(l.DB)}}
	if l.Pattern != "" {
		q.Set("pattern", l.Pattern)
	} else if l.IsPrefix {
		q.Set("prefix", l.Prefix)
		if l.Flat {
			q.Set("flat", "1")
		}
	} else {
		q.Set("family", l.Family)
	}
	if at := l.At.String(); at != "" {
		q.Set("at", at)
	}
	return q
}

// URL is the page of the list at cursor at.
func (l keyList) URL(at browse.Cursor) string {
	u := route.FamilyKeysURL(l.Conn, l.DB, l.Family)
	if l.Pattern != "" {
		u = route.PatternKeysURL(l.Conn, l.DB, l.Pattern)
	} else if l.IsPrefix {
		u = route.PrefixKeysURL(l.Conn, l.DB, l.Prefix)
		if l.Flat {
			u += "&flat=1"
		}
	}
	if s := at.String(); s != "" {
		u += "&at=" + url.QueryEscape(s)
	}
	return u
}

// MaxListPattern bounds a ?pattern= glob (SCAN MATCH is linear in it).
const MaxListPattern = 1024

// parsePatternList reads a pattern list's parameters: ?pattern=GLOB
// alone (with ?at=).
func parsePatternList(l keyList, q url.Values) (keyList, error) {
	l.Pattern, l.Family, l.Prefix, l.IsPrefix = q.Get("pattern"), "", "", false
	switch {
	case q.Has("family") || q.Has("prefix") || q.Has("flat"):
		return keyList{}, fmt.Errorf("%w: a key list is of a family, a prefix or a pattern, one of them", route.ErrParam)
	case l.Pattern == "":
		return keyList{}, fmt.Errorf("%w: the pattern is empty", route.ErrParam)
	case len(l.Pattern) > MaxListPattern:
		return keyList{}, fmt.Errorf("%w: the pattern is longer than %d bytes", route.ErrParam, MaxListPattern)
	}
	at, err := browse.ParseCursor(q.Get("at"))
	if err != nil {
		return keyList{}, fmt.Errorf("%w: %s", route.ErrParam, err.Error())
	}
	l.At = at
	return l, nil
}

// patternHead is a pattern list's heading and scope.
func patternHead(vm *views.KeysPageVM, l keyList) {
	p, cut := views.ShortName(l.Pattern)
	if cut {
		p += "…"
	}
	vm.Heading = "keys matching “" + p + "”"
	vm.Scope = "Every key of the database that SCAN MATCH finds for the glob pattern “" + p + "”, whatever its family."
	vm.PatternList = l.Pattern
}
