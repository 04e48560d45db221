package views

import (
	"regexp"
	"time"

	"github.com/keydeck/keydeck/views/format"
)

// A time the server wrote with format.Time or format.Clock, found in text
// the handlers built (never in Redis data: keys and values are shown as
// they are).
var timeInText = regexp.MustCompile(`\b(?:\d{4}-\d{2}-\d{2} )?\d{2}:\d{2}:\d{2} UTC\b`)

// moment is one time shown on a page: the UTC text the server wrote (what
// a browser without script, or a reader who chose UTC, sees) and, for a
// full date, the instant. A clock (format.Clock) has no date: the browser
// takes the nearest such moment, as format.Clock is only used for moments
// of the last hours.
type moment struct {
	Text  string
	At    time.Time
	Clock bool
}

// parseMoment recognises a whole string written by format.Time or
// format.Clock.
func parseMoment(s string) (moment, bool) {
	if t, err := time.Parse(format.TimeLayout, s); err == nil {
		return moment{Text: s, At: t}, true
	}
	if _, err := time.Parse(format.ClockLayout, s); err == nil {
		return moment{Text: s, Clock: true}, true
	}
	return moment{}, false
}

// textPart is a run of a sentence: plain text, or a time.
type textPart struct {
	Text string
	Time *moment
}

// splitTimes cuts a sentence around the times in it.
func splitTimes(s string) []textPart {
	var out []textPart
	last := 0
	for _, loc := range timeInText.FindAllStringIndex(s, -1) {
		m, ok := parseMoment(s[loc[0]:loc[1]])
		if !ok {
			continue
		}
		if loc[0] > last {
			out = append(out, textPart{Text: s[last:loc[0]]})
		}
		out = append(out, textPart{Time: &m})
		last = loc[1]
	}
	if last < len(s) {
		out = append(out, textPart{Text: s[last:]})
	}
	return out
}

// rfc3339 is the machine-readable instant of a <time>.
func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339) }
