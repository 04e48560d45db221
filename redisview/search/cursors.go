package search

import (
	"errors"
	"fmt"
	"strings"

	"github.com/keydeck/keydeck/redisview"
)

// Cursors is the continue link's parameter: each unfinished scan's id and
// cursor ("0.3:1234,2.0:77"); "" when every scan is done. A cluster's
// cursor (one per primary, "s0:12,s5461:0") is written with "_" for its
// commas ("0.0:s0:12_s5461:0"), so a standalone link reads as before.
func (r Result) Cursors() string {
	var parts []string
	for _, s := range r.Scans {
		if !s.Done {
			c := s.Cursor
			if c.Done() {
				c = redisview.CursorStart // not started yet
			}
			parts = append(parts, s.ID+":"+strings.ReplaceAll(string(c), ",", "_"))
		}
	}
	return strings.Join(parts, ",")
}

// ErrCursors is a malformed continue parameter.
var ErrCursors = errors.New("malformed continue cursors")

// ParseCursors reads Cursors' form; "" is the first request (nil).
func ParseCursors(s string) (map[string]redisview.Cursor, error) {
	if s == "" {
		return nil, nil
	}
	out := map[string]redisview.Cursor{}
	for _, part := range strings.Split(s, ",") {
		id, cur, ok := strings.Cut(part, ":")
		db, n, ok2 := strings.Cut(id, ".")
		if !ok || !ok2 || !digits(db) || !digits(n) || len(out) >= 4096 {
			return nil, fmt.Errorf("%w: %q", ErrCursors, part)
		}
		c, err := redisview.ParseCursor(strings.ReplaceAll(cur, "_", ","))
		if err != nil || cur == "" {
			return nil, fmt.Errorf("%w: %q", ErrCursors, part)
		}
		out[id] = c
	}
	return out, nil
}

func digits(s string) bool {
	if s == "" || len(s) > 5 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
