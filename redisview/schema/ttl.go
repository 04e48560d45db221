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

// TTLFault is how a key's remaining TTL breaks its family's policy.
type TTLFault uint8

const (
	TTLObeyed   TTLFault = iota // no fault
	TTLUnwanted                 // it has a TTL; the pack says persistent
	TTLMissing                  // no TTL; the pack requires one
	TTLAboveMax                 // the TTL is above the policy's Max
	TTLBelowMin                 // the TTL is below the policy's Min
)

// TTLViolation is a key's TTL against its family's policy: the fault, the
// TTL read and the bound it crosses (Max or Min). The zero value obeys.
// views/format writes it for people.
type TTLViolation struct {
	Fault TTLFault
	TTL   time.Duration
	Bound time.Duration
}

// Broken: the key's TTL breaks the policy.
func (v TTLViolation) Broken() bool { return v.Fault != TTLObeyed }

// Violation checks a key's remaining TTL as PTTL reports it (negative: no
// expiry) against the policy; the zero TTLViolation when the key obeys.
func (p TTLPolicy) Violation(pttl time.Duration) TTLViolation {
	persistent := pttl < 0
	switch p.Kind {
	case TTLNone:
		if !persistent {
			return TTLViolation{Fault: TTLUnwanted, TTL: pttl}
		}
	case TTLRequired:
		switch {
		case persistent:
			return TTLViolation{Fault: TTLMissing, TTL: pttl}
		case p.Max > 0 && pttl > p.Max:
			return TTLViolation{Fault: TTLAboveMax, TTL: pttl, Bound: p.Max}
		case p.Min > 0 && pttl < p.Min:
			return TTLViolation{Fault: TTLBelowMin, TTL: pttl, Bound: p.Min}
		}
	}
	return TTLViolation{}
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
// ("5m", not "5m0s"): pack notation, the inverse of parseDuration. It is
// for the loader's errors only (they quote the pack back in its own
// notation); what a page shows of a duration is views/format's.
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
