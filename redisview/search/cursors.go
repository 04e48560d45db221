package search

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Cursors is the continue link's parameter: each unfinished scan's id and
// cursor; "" when every scan is done.
func (r Result) Cursors() string {
	var parts []string
	for _, s := range r.Scans {
		if !s.Done {
			parts = append(parts, s.ID+":"+strconv.FormatUint(s.Cursor, 10))
		}
	}
	return strings.Join(parts, ",")
}

// ErrCursors is a malformed continue parameter.
var ErrCursors = errors.New("malformed continue cursors")

// ParseCursors reads Cursors' form; "" is the first request (nil).
func ParseCursors(s string) (map[string]uint64, error) {
	if s == "" {
		return nil, nil
	}
	out := map[string]uint64{}
	for _, part := range strings.Split(s, ",") {
		id, cur, ok := strings.Cut(part, ":")
		db, n, ok2 := strings.Cut(id, ".")
		if !ok || !ok2 || !digits(db) || !digits(n) || len(out) >= 4096 {
			return nil, fmt.Errorf("%w: %q", ErrCursors, part)
		}
		c, err := strconv.ParseUint(cur, 10, 64)
		if err != nil {
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
