// Package format is how Keydeck writes numbers, sizes, durations and times
// for people. Every page, fragment and view model goes through it, so one
// figure reads the same wherever it appears: a TTL is "1h", never "1h 0m"
// on one page and "1h" on the next; a score is "1,000,000", never "1e+06".
//
// The rules:
//   - durations have at most two units, and a zero second unit is dropped
//     ("1h", "1h 30m", "2d 4h", "850ms");
//   - counts group thousands with commas ("1,234,567");
//   - a count with a unit agrees in number ("1 byte", "2 bytes");
//   - sizes in memory are binary, one decimal ("1.2 KiB", "512 B");
//   - times are UTC and say so ("2026-11-29 14:30:05 UTC").
//
// It is the one formatter: the domain's own texts (action previews and
// the audit's summaries, size limits in errors) call Duration and Bytes
// too, so a preview and a page never round one figure two ways. Of
// Keydeck's it imports only plain types the domain defines and this writes:
// redisview/schema's (a TTL rule and its violation) and redisview/level's
// (a limit's level, LimitLevel), so the domain can use it without seeing
// a view.
package format

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/keydeck/keydeck/redisview/schema"
)

// Duration renders a length of time to two units at most ("4m 10s",
// "3d 4h", "850ms"), dropping a second unit that is zero ("1h", not
// "1h 0m"): a figure people read at a glance. Negative durations read as
// their size with a minus sign.
func Duration(d time.Duration) string {
	if d < 0 {
		if d == math.MinInt64 {
			d++
		}
		return "-" + Duration(-d)
	}
	if d < time.Second {
		return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	}
	units := [...]struct {
		n    time.Duration
		name string
	}{{24 * time.Hour, "d"}, {time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}}
	var b strings.Builder
	parts := 0
	for _, u := range units {
		if d >= u.n {
			if parts > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(strconv.FormatInt(int64(d/u.n), 10))
			b.WriteString(u.name)
			d %= u.n
			parts++
		} else if parts > 0 {
			break // "1h 0m 5s" reads worse than "1h"
		}
		if parts == 2 {
			break
		}
	}
	return b.String()
}

// TTL renders a key's remaining lifetime as Redis reports it: a negative
// value (go-redis's -1 and -2) means the key has no TTL.
func TTL(d time.Duration) string {
	if d < 0 {
		return "no TTL"
	}
	return Duration(d)
}

// PTTL renders a PTTL reply in milliseconds: -1 no TTL, -2 the key is
// absent.
func PTTL(ms int64) string {
	switch {
	case ms == -2:
		return "absent"
	case ms < 0:
		return "no TTL"
	}
	return Duration(time.Duration(ms) * time.Millisecond)
}

// Uptime is Duration to the minute: a figure that changed every second
// would make every live fragment differ and be re-sent on every tick.
func Uptime(d time.Duration) string {
	if d < time.Minute {
		return "under a minute"
	}
	return Duration(d.Truncate(time.Minute))
}

// Count writes n with thousands separators: "1,234,567".
func Count(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	return sign(neg) + group(s)
}

// Plural writes n with the unit that agrees with it: Plural(1, "field",
// "fields") is "1 field", Plural(1200, …) "1,200 fields".
func Plural(n int64, one, many string) string {
	if n == 1 || n == -1 {
		return Count(n) + " " + one
	}
	return Count(n) + " " + many
}

// ByteCount is an exact number of bytes: "1 byte", "1,048,576 bytes".
func ByteCount(n int64) string { return Plural(n, "byte", "bytes") }

// units names what a key's size counts, by Redis type. The same words as
// redisview/action's previews ("hash, 12 fields").
var units = map[string][2]string{
	"string": {"byte", "bytes"},
	"hash":   {"field", "fields"},
	"list":   {"item", "items"},
	"set":    {"member", "members"},
	"zset":   {"member", "members"},
	"stream": {"entry", "entries"},
}

// Size is a key's size in its type's unit: "12 fields", "1 member",
// "300 bytes" (a string's length). Types without a unit (ReJSON, modules)
// count "elements".
func Size(n int64, redisType string) string {
	u, ok := units[redisType]
	if !ok {
		u = [2]string{"element", "elements"}
	}
	return Plural(n, u[0], u[1])
}

// Bytes is an amount of memory, binary and to one decimal above 1 KiB:
// "512 B", "1.0 KiB", "2.4 MiB".
func Bytes(n int64) string {
	const unit = 1024
	if n < unit && n > -unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	neg := n < 0
	f := math.Abs(float64(n))
	exp := 0
	// Move up a unit where one decimal would round to 1024.0 of this one.
	for f >= (unit-0.05)*unit && exp < 5 {
		f /= unit
		exp++
	}
	return sign(neg) + strconv.FormatFloat(f/unit, 'f', 1, 64) + " " + string("KMGTPE"[exp]) + "iB"
}

// Score is a sorted-set score: integers grouped ("1,000,000"), fractions
// in full ("1,234.5", "0.125"), infinities as Redis writes them ("+inf",
// "-inf"). Only magnitudes of 1e21 and beyond use an exponent ("1e+21"),
// where fixed notation would be a row of zeros.
func Score(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "+inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.Abs(f) >= 1e21:
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	whole, frac, hasFrac := strings.Cut(s, ".")
	out := sign(neg) + group(whole)
	if hasFrac {
		out += "." + frac
	}
	return out
}

// Rate is a per-second figure: one decimal below 100 ("12.5"), whole and
// grouped above ("1,234").
func Rate(f float64) string {
	if f >= 100 {
		return Count(int64(f + 0.5))
	}
	return strconv.FormatFloat(f, 'f', 1, 64)
}

// Percent writes a ratio (0.5) as a percentage with the given decimals
// ("50%", "50.0%").
func Percent(ratio float64, decimals int) string {
	return strconv.FormatFloat(ratio*100, 'f', decimals, 64) + "%"
}

// Layouts of the times Keydeck shows; always UTC, and saying so. The
// browser rewrites them to its own time zone (views.Times): exported so
// that the views can recognise them in text.
const (
	timeLayout  = "2006-01-02 15:04:05 UTC"
	clockLayout = "15:04:05 UTC"

	TimeLayout  = timeLayout
	ClockLayout = clockLayout
)

// Time is a moment in UTC: "2026-11-29 14:30:05 UTC".
func Time(t time.Time) string { return t.UTC().Format(timeLayout) }

// Clock is the time of day in UTC, for moments of the last hours:
// "14:30:05 UTC".
func Clock(t time.Time) string { return t.UTC().Format(clockLayout) }

// EpochMillis is Time of a Unix time in milliseconds, as applications
// store them in Redis.
func EpochMillis(ms int64) string { return Time(time.UnixMilli(ms)) }

func group(digits string) string {
	if len(digits) <= 3 {
		return digits
	}
	var b strings.Builder
	b.Grow(len(digits) + len(digits)/3)
	for i := 0; i < len(digits); i++ {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteByte(digits[i])
	}
	return b.String()
}

func sign(neg bool) string {
	if neg {
		return "-"
	}
	return ""
}

// TTLPolicy writes a family's TTL rule: "none", "any", "required",
// "≤ 30d", "≥ 1m", "10s–15s".
func TTLPolicy(p schema.TTLPolicy) string {
	switch p.Kind {
	case schema.TTLNone:
		return "none"
	case schema.TTLAny:
		return "any"
	}
	switch {
	case p.Min == 0 && p.Max == 0:
		return "required"
	case p.Min == 0:
		return "≤ " + Duration(p.Max)
	case p.Max == 0:
		return "≥ " + Duration(p.Min)
	}
	return Duration(p.Min) + "–" + Duration(p.Max)
}

// TTLViolation writes how a key's TTL breaks its family's rule, "" when
// it does not.
func TTLViolation(v schema.TTLViolation) string {
	switch v.Fault {
	case schema.TTLUnwanted:
		return "has a TTL (" + Duration(v.TTL) + "), pack says persistent"
	case schema.TTLMissing:
		return "no TTL, pack requires one"
	case schema.TTLAboveMax:
		return "TTL " + Duration(v.TTL) + " above the expected maximum " + Duration(v.Bound)
	case schema.TTLBelowMin:
		return "TTL " + Duration(v.TTL) + " below the expected minimum " + Duration(v.Bound)
	}
	return ""
}
