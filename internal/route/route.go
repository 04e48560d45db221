// Package route holds the console's addresses: the path of every page, the
// one function that builds a link to each, and the parsers of the
// parameters those links carry. Handlers register the paths and parse with
// these functions; views link with them. It imports neither echo nor templ
// nor anything of Redis, so both sides can use it.
package route

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// Paths as the router registers them.
const (
	Home              = "/"
	Overview          = "/c/:conn"
	Database          = "/c/:conn/db/:db"
	Key               = "/c/:conn/db/:db/key"
	Leaderboard       = "/c/:conn/db/:db/leaderboard"
	Leaderboards      = "/leaderboards"
	Audit             = "/audit"
	Account           = "/account"
	SignOutEverywhere = "/account/sign-out-everywhere"
	ClearLockout      = "/account/clear-lockout"
	AccountTokens     = "/account/tokens"
	RevokeToken       = "/account/tokens/revoke"
	Login             = "/login"
	Logout            = "/logout"
	Live              = "/ws"
	Preview           = "/actions/preview"
	Execute           = "/actions/execute"
	UndoPreview       = "/actions/undo"
	Healthz           = "/healthz"
	Readyz            = "/readyz"
	Static            = "/static/*"
)

// Sentinel errors of malformed addresses; the error handler maps them to
// statuses. Every error a parser here returns wraps one of them and says
// what is wrong in words fit for the page.
var (
	// ErrNoPage: a path parameter names nothing (/c/main/db/x) — 404.
	ErrNoPage = errors.New("no such page")
	// ErrParam: a query or form parameter is malformed — 400.
	ErrParam = errors.New("bad parameter")
)

type paramError struct {
	msg      string
	sentinel error
}

func (e paramError) Error() string { return e.msg }
func (e paramError) Unwrap() error { return e.sentinel }

func badParam(format string, args ...any) error {
	return paramError{fmt.Sprintf(format, args...), ErrParam}
}

// MaxDB bounds database indexes from URLs: each index gets its own client
// and sweeper, so the range must not be something a visitor can inflate.
// Redis defaults to 16 databases; 256 covers generous configurations.
const MaxDB = 256

// ParseDB is the one parser of a database index, wherever it comes from: a
// decimal 0–255 written the way links write it ("7", never "07").
func ParseDB(s string) (int, error) {
	db, err := strconv.Atoi(s)
	if err != nil || db < 0 || db >= MaxDB || strconv.Itoa(db) != s {
		return 0, badParam("%q is not a database index (0 to %d)", s, MaxDB-1)
	}
	return db, nil
}

// PathDB parses the :db path parameter: a malformed index names no page.
func PathDB(s string) (int, error) {
	db, err := ParseDB(s)
	if err != nil {
		return 0, paramError{err.Error(), ErrNoPage}
	}
	return db, nil
}

// OverviewURL is the live overview of one connection.
func OverviewURL(conn string) string { return "/c/" + url.PathEscape(conn) }

// DatabaseURL is the statistics page of one database.
func DatabaseURL(conn string, db int) string {
	return OverviewURL(conn) + "/db/" + strconv.Itoa(db)
}

// KeyPath is the key page without its key: the key lookup form's action.
func KeyPath(conn string, db int) string { return DatabaseURL(conn, db) + "/key" }

// KeyURL is one key's page. The name travels percent-encoded, byte-exact.
func KeyURL(conn string, db int, key string) string {
	return KeyPath(conn, db) + "?k=" + url.QueryEscape(key)
}

// MaxKey bounds the key a key page is asked for.
const MaxKey = 64 << 10

// ParseKey reads the key page's ?k=.
func ParseKey(q url.Values) (string, error) {
	key := q.Get("k")
	if key == "" || len(key) > MaxKey {
		return "", badParam("Name a key with ?k= (at most 64 KiB).")
	}
	return key, nil
}

// LiveURL is the websocket subscribing to one live topic.
func LiveURL(topic string) string { return Live + "?topic=" + url.QueryEscape(topic) }

// LoginURL is the sign-in page, returning to next afterwards.
func LoginURL(next string) string {
	if next == "" {
		return Login
	}
	return Login + "?next=" + url.QueryEscape(next)
}

// Value is where the key page's value starts and how it is shown: At is a
// scan cursor, an offset or a stream entry ID (its meaning is the key's
// type's and the window's); Filter keeps hash fields and set members that
// contain it; View shows a string as "text", "hex" or "json" ("" lets the
// page choose); Desc shows a stream newest first; Min and Max make a
// sorted set's page a score window; Member looks one sorted-set member up;
// Trail is the scan cursors of the pages before this one (oldest first),
// so a scan can go back.
type Value struct {
	At, Filter, View string
	Desc             bool
	Min, Max         string
	Member           string
	Trail            []string
}

// MaxFilter bounds a value filter.
const MaxFilter = 256

// MaxTrail is how many scan pages back the key page remembers.
const MaxTrail = 16

// KeyValueURL is one key's page showing the page of its value v names.
// Every parameter travels percent-encoded, byte-exact.
func KeyValueURL(conn string, db int, key string, v Value) string {
	u := KeyURL(conn, db, key)
	// Values.Encode sorts by name; the order of a link's parameters is the
	// writer's choice, so links keep the reading order below.
	for _, name := range valueParams {
		if val := v.values().Get(name); val != "" {
			u += "&" + name + "=" + url.QueryEscape(val)
		}
	}
	return u
}

// valueParams are the key page's value parameters, in link order.
var valueParams = []string{"at", "q", "view", "order", "min", "max", "m", "trail"}

// values is v as query parameters, the empty ones left out: the one
// writer of ParseValue's input, for links and for the live topic alike.
func (v Value) values() url.Values {
	q := url.Values{}
	set := func(name, val string) {
		if val != "" {
			q.Set(name, val)
		}
	}
	set("at", v.At)
	set("q", v.Filter)
	set("view", v.View)
	if v.Desc {
		q.Set("order", "desc")
	}
	set("min", v.Min)
	set("max", v.Max)
	set("m", v.Member)
	set("trail", strings.Join(v.Trail, ","))
	return q
}

// AddTo writes v's parameters into q (a live topic's argument), so that
// ParseValue(q) gives v back.
func (v Value) AddTo(q url.Values) {
	for name, vals := range v.values() {
		q[name] = vals
	}
}

// ParseValue reads the key page's ?at=, ?q=, ?view=, ?order=, ?min=,
// ?max=, ?m= and ?trail=. What fits the key's type (a cursor, an offset, a
// score) is checked where the type is known (redisview/value).
func ParseValue(q url.Values) (Value, error) {
	v := Value{At: strings.TrimSpace(q.Get("at")), Filter: q.Get("q"), View: q.Get("view"),
		Min: strings.TrimSpace(q.Get("min")), Max: strings.TrimSpace(q.Get("max")), Member: q.Get("m")}
	if len(v.At) > 64 || strings.Trim(v.At, "0123456789-(:") != "" {
		return Value{}, badParam("%q is not a page position (a cursor, cursor:rows shown, an offset or a stream entry ID).", v.At)
	}
	if len(v.Filter) > MaxFilter {
		return Value{}, badParam("A filter is at most %d bytes.", MaxFilter)
	}
	switch v.View {
	case "", "text", "hex", "json":
	default:
		return Value{}, badParam("view is text, hex or json, not %q.", v.View)
	}
	switch o := q.Get("order"); o {
	case "", "asc":
	case "desc":
		v.Desc = true
	default:
		return Value{}, badParam("order is asc or desc, not %q.", o)
	}
	for name, b := range map[string]string{"min": v.Min, "max": v.Max} {
		if len(b) > 64 {
			return Value{}, badParam("%s is a score of at most 64 characters.", name)
		}
	}
	if len(v.Member) > MaxKey {
		return Value{}, badParam("A member to look up is at most 64 KiB.")
	}
	if t := q.Get("trail"); t != "" {
		v.Trail = strings.Split(t, ",")
		if len(v.Trail) > MaxTrail {
			return Value{}, badParam("trail holds at most %d scan cursors.", MaxTrail)
		}
		for _, c := range v.Trail {
			if !scanPosition(c) {
				return Value{}, badParam("trail is scan cursors separated by commas, not %q.", t)
			}
		}
	}
	return v, nil
}

// scanPosition reports whether s is a scan page's position: a cursor, or
// cursor:rows when the page before kept only part of a server reply that
// held more than a page (value.ScanPosition reads it).
func scanPosition(s string) bool {
	c, rows, hasRows := strings.Cut(s, ":")
	parts := []string{c}
	if hasRows {
		parts = append(parts, rows)
	}
	for _, p := range parts {
		if n, err := strconv.ParseUint(p, 10, 64); err != nil || strconv.FormatUint(n, 10) != p {
			return false
		}
	}
	return true
}
