package schema

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// TTLKind is the shape of a family's TTL policy.
type TTLKind uint8

const (
	TTLAny      TTLKind = iota // no expectation
	TTLNone                    // the key must be persistent
	TTLRequired                // the key must expire, within [Min, Max] when set
)

// TTLPolicy says whether a family's keys expire and how far ahead. Min and
// Max bound the remaining TTL (what PTTL reports), so a "5 minute cache" is
// Max 5m with no Min: the remaining time only ever shrinks.
type TTLPolicy struct {
	Kind TTLKind
	Min  time.Duration // 0: no lower bound
	Max  time.Duration // 0: no upper bound
}

func (p TTLPolicy) String() string {
	switch p.Kind {
	case TTLNone:
		return "none"
	case TTLAny:
		return "any"
	}
	switch {
	case p.Min == 0 && p.Max == 0:
		return "required"
	case p.Min == 0:
		return "≤ " + formatDuration(p.Max)
	case p.Max == 0:
		return "≥ " + formatDuration(p.Min)
	}
	return formatDuration(p.Min) + "–" + formatDuration(p.Max)
}

// Violation checks a key's remaining TTL as PTTL reports it (negative: no
// expiry) and says what is wrong, or "" when the key obeys the policy.
func (p TTLPolicy) Violation(pttl time.Duration) string {
	persistent := pttl < 0
	switch p.Kind {
	case TTLNone:
		if !persistent {
			return "has a TTL (" + formatDuration(pttl) + "), pack says persistent"
		}
	case TTLRequired:
		switch {
		case persistent:
			return "no TTL, pack requires one"
		case p.Max > 0 && pttl > p.Max:
			return "TTL " + formatDuration(pttl) + " above the expected maximum " + formatDuration(p.Max)
		case p.Min > 0 && pttl < p.Min:
			return "TTL " + formatDuration(pttl) + " below the expected minimum " + formatDuration(p.Min)
		}
	}
	return ""
}

// parseDuration is time.ParseDuration plus a whole-day unit ("30d"), since
// packs talk about 30-day orders and 40-day budgets. A bare number is
// refused: "60" could mean seconds or milliseconds.
func parseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "0" {
		return 0, nil
	}
	if days, ok := strings.CutSuffix(s, "d"); ok && allDigits(days) {
		n, err := strconv.ParseInt(days, 10, 32)
		if err == nil && n <= 100*365 {
			return time.Duration(n) * 24 * time.Hour, nil
		}
	}
	if allDigits(strings.TrimPrefix(s, "-")) {
		return 0, fmt.Errorf("duration %s needs a unit (ms, s, m, h or d)", s)
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("bad duration %q (want e.g. 90s, 5m, 1h30m, 30d)", s)
	}
	return d, nil
}

// formatDuration prints whole days as "30d" and drops Go's zero units
// ("5m", not "5m0s").
func formatDuration(d time.Duration) string {
	if d >= 24*time.Hour && d%(24*time.Hour) == 0 {
		return strconv.FormatInt(int64(d/(24*time.Hour)), 10) + "d"
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}
