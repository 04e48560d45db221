package redisview

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// ErrBadURL is returned for a connection URL Keydeck cannot use.
var ErrBadURL = errors.New("invalid Redis URL")

// ParseURL turns a redis://, rediss://, unix://, redis+sentinel:// or
// rediss+sentinel:// URL into the options of the data nodes' clients (a
// sentinel URL's: of the primary it names). Errors never contain the
// password: they quote only the redacted URL.
func ParseURL(raw string) (*redis.Options, error) {
	t, err := parseTarget(raw)
	if err != nil {
		return nil, err
	}
	return t.opts, nil
}

// parseServerURL checks and parses one server's URL (u is raw parsed,
// perhaps rewritten: a sentinel URL's first sentinel with its credentials).
func parseServerURL(raw string, u *url.URL) (*redis.Options, error) {
	switch u.Scheme {
	case "redis", "rediss", "unix":
	case "":
		return nil, fmt.Errorf("%w %q: missing scheme (want redis://, rediss://, unix:// or redis+sentinel://)", ErrBadURL, RedactURL(raw))
	default:
		return nil, fmt.Errorf("%w %q: scheme %q not supported (want redis://, rediss://, unix:// or redis+sentinel://)", ErrBadURL, RedactURL(raw), u.Scheme)
	}
	if u.Scheme != "unix" && u.Host == "" {
		return nil, fmt.Errorf("%w %q: missing host", ErrBadURL, RedactURL(raw))
	}
	// go-redis accepts any number here and fails only when dialling, long
	// after the flags were read; a port that cannot exist is a typo.
	if p := u.Port(); u.Scheme != "unix" && p != "" {
		if n, err := strconv.Atoi(p); err == nil && (n < 1 || n > 65535) {
			return nil, fmt.Errorf("%w %q: port %d out of range (want 1–65535)", ErrBadURL, RedactURL(raw), n)
		}
	}
	opt, err := redis.ParseURL(u.String())
	if err != nil {
		msg := err.Error()
		if p, ok := u.User.Password(); ok && p != "" {
			msg = strings.ReplaceAll(msg, p, "xxxxx")
		}
		return nil, fmt.Errorf("%w %q: %s", ErrBadURL, RedactURL(raw), strings.TrimPrefix(msg, "redis: "))
	}
	return opt, nil
}

// RedactURL hides the password of a URL for display and logs.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparseable URL)"
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	// Query parameters may carry credentials too (e.g. password=).
	q := u.Query()
	for k := range q {
		if strings.Contains(strings.ToLower(k), "pass") {
			q.Set(k, "xxxxx")
		}
	}
	u.RawQuery = q.Encode()
	return u.String()
}
