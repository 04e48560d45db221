package action

import (
	"strconv"
	"strings"
	"time"
)

const (
	minTTL = time.Second
	maxTTL = 365 * 24 * time.Hour
)

// parseTTL reads a set-ttl argument: "persist", or a duration of 1s to 365d
// written the Go way with an optional leading day count ("90s", "10m",
// "1h30m", "7d", "1d12h"). Bare numbers are refused: seconds or
// milliseconds is exactly the ambiguity that deletes a key a day early.
func parseTTL(s string) (d time.Duration, persist bool, err error) {
	s = strings.TrimSpace(strings.ToLower(s))
	if s == "persist" {
		return 0, true, nil
	}
	bad := func(why string) error {
		return invalidf("ttl %q: %s (want a duration from 1s to 365d, such as 90s, 10m, 2h or 7d, or \"persist\" to remove the TTL)", s, why)
	}
	if s == "" {
		return 0, false, bad("empty")
	}
	rest := s
	if i := strings.IndexByte(s, 'd'); i >= 0 {
		days, err := strconv.ParseInt(s[:i], 10, 64)
		if err != nil || days < 0 || days > 365 {
			return 0, false, bad("bad day count")
		}
		d = time.Duration(days) * 24 * time.Hour
		rest = s[i+1:]
	}
	if rest != "" {
		if _, err := strconv.ParseFloat(rest, 64); err == nil {
			return 0, false, bad("a number needs a unit")
		}
		r, err := time.ParseDuration(rest)
		if err != nil || r < 0 {
			return 0, false, bad("not a duration")
		}
		d += r
	}
	if d < minTTL || d > maxTTL {
		return 0, false, bad("out of range")
	}
	return d, false, nil
}
