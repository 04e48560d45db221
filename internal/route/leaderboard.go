package route

import (
	"net/url"
	"strconv"
)

// Rows of a leaderboard window: the default, the most one page shows, and
// the furthest start (far past any board; keeps start+n from overflowing).
const (
	DefaultRows = 50
	MaxRows     = 500
	maxStart    = 1_000_000_000
)

// Window is one page of a leaderboard: the leaderboard page's parameters,
// and its live topic's.
type Window struct {
	Conn     string
	DB       int
	Key      string
	Start, N int64
}

// LeaderboardPath is the leaderboard page without its window: the action of
// the page's own GET forms, which add the window.
func LeaderboardPath(conn string, db int) string { return DatabaseURL(conn, db) + "/leaderboard" }

// URL is the window's page.
func (w Window) URL() string {
	q := url.Values{"k": {w.Key}, "start": {strconv.FormatInt(w.Start, 10)}, "n": {strconv.FormatInt(w.N, 10)}}
	return LeaderboardPath(w.Conn, w.DB) + "?" + q.Encode()
}

// At is the same window starting at rank offset start.
func (w Window) At(start int64) Window { w.Start = start; return w }

// Values are all of the window's parameters, the connection and database
// included (the live topic names the window by them).
func (w Window) Values() url.Values {
	return url.Values{"conn": {w.Conn}, "db": {strconv.Itoa(w.DB)}, "k": {w.Key},
		"start": {strconv.FormatInt(w.Start, 10)}, "n": {strconv.FormatInt(w.N, 10)}}
}

// ParseWindow reads a window's key, start and n from q; the connection and
// database come from wherever the caller found them (path or query).
func ParseWindow(conn string, db int, q url.Values) (Window, error) {
	w := Window{Conn: conn, DB: db, Key: q.Get("k"), N: DefaultRows}
	if w.Key == "" && q.Has("kq") {
		// The page's forms send a key that a form field would change (not
		// UTF-8, control characters) query-escaped once more, as kq
		// (views.keyFieldName), so it arrives byte-exact.
		k, err := url.QueryUnescape(q.Get("kq"))
		if err != nil {
			return w, badParam("kq: want a query-escaped key.")
		}
		w.Key = k
	}
	if w.Key == "" || len(w.Key) > MaxLinkedName {
		return w, badParam("Name the leaderboard key with ?k= (at most 4 KiB).")
	}
	var err error
	if s := q.Get("start"); s != "" {
		if w.Start, err = strconv.ParseInt(s, 10, 64); err != nil || w.Start < 0 || w.Start > maxStart {
			return w, badParam("start: want a rank offset from 0 to 1,000,000,000.")
		}
	}
	if s := q.Get("n"); s != "" {
		if w.N, err = strconv.ParseInt(s, 10, 64); err != nil || w.N < 1 || w.N > MaxRows {
			return w, badParam("n: want 1 to %d rows.", MaxRows)
		}
	}
	return w, nil
}

// MaxLinkedName is the longest name a link carries: a link holds the name
// once more, up to three times its length when percent-encoded, so a 1 MB
// key name must not make every page that lists it megabytes long.
const MaxLinkedName = 4 << 10

// Linkable reports whether a link may carry name.
func Linkable(name string) bool { return len(name) <= MaxLinkedName }
