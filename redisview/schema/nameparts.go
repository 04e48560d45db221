package schema

import (
	"strconv"
	"strings"
	"time"
)

// NamePart is one placeholder of a classified key, read for a person: its
// raw bytes as they are in the name and, when the placeholder's class or
// name says how, what they mean.
type NamePart struct {
	Name  string // the placeholder's name in the pattern
	Class string // its class ("any", "digits", "base64url", …)
	Raw   string // as it appears in the key, byte-exact
	// Meaning is the decoded reading ("" when there is none): the text a
	// base64 placeholder encodes, the UTC time of an epoch, the month of
	// a yyyyMM period.
	Meaning string
	// How says how Meaning was read, or why Raw is kept ("hex, kept as is").
	How string
}

// Epoch readings are only offered inside [epochFrom, epochTo): a number of
// digits outside that is far more likely an id or a count than a time.
var (
	epochFrom = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	epochTo   = time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)
)

// NameParts reads each placeholder of m. It is pure: it reads the name
// only, never Redis.
func NameParts(m Match) []NamePart {
	if m.Family == nil || m.Family.Pattern == nil {
		return nil
	}
	phs := m.Family.Pattern.Placeholders()
	out := make([]NamePart, 0, len(m.Vars))
	for i, v := range m.Vars {
		var ph Placeholder
		if i < len(phs) {
			ph = phs[i]
		}
		p := NamePart{Name: v.Name, Class: ph.Class.String(), Raw: v.Raw}
		p.Meaning, p.How = readPart(ph, v)
		out = append(out, p)
	}
	return out
}

// readPart is one placeholder's meaning and how it was read.
func readPart(ph Placeholder, v Var) (meaning, how string) {
	switch {
	case ph.Class.Decodes():
		if v.Decoded {
			return v.Value, ph.Class.String() + ", decoded (UTF-8 text)"
		}
		return "", "not " + ph.Class.String() + " of UTF-8 text: kept as is"
	case ph.Class == ClassHex:
		return "", "hex, kept as is"
	}
	if !allDigits(v.Raw) {
		return "", ""
	}
	if s, ok := Period(ph.Name, v.Raw); ok {
		return s, "period " + periodLayout(v.Raw)
	}
	if ph.Class == ClassDigits || timeName(ph.Name) {
		if t, unit, ok := Epoch(v.Raw); ok {
			layout := "2006-01-02 15:04:05 UTC"
			if unit == "milliseconds" {
				layout = "2006-01-02 15:04:05.000 UTC"
			}
			return t.UTC().Format(layout), "epoch " + unit
		}
	}
	return "", ""
}

func periodLayout(raw string) string {
	if len(raw) == 8 {
		return "yyyyMMdd"
	}
	return "yyyyMM"
}

// Period reads a yyyyMM or yyyyMMdd placeholder ("202611" is
// "November 2026", "20261129" is "29 November 2026"). The placeholder's
// name must say it is one (it contains "yyyymm", any case): six digits
// alone are as likely a number.
func Period(name, raw string) (string, bool) {
	if !strings.Contains(strings.ToLower(name), "yyyymm") || !allDigits(raw) || (len(raw) != 6 && len(raw) != 8) {
		return "", false
	}
	y, _ := strconv.Atoi(raw[:4])
	mo, _ := strconv.Atoi(raw[4:6])
	if y < 2000 || y >= 2100 || mo < 1 || mo > 12 {
		return "", false
	}
	if len(raw) == 6 {
		return time.Month(mo).String() + " " + raw[:4], true
	}
	d, _ := strconv.Atoi(raw[6:])
	t := time.Date(y, time.Month(mo), d, 0, 0, 0, 0, time.UTC)
	if d < 1 || t.Day() != d { // 20260231 is no day
		return "", false
	}
	return strconv.Itoa(d) + " " + t.Month().String() + " " + raw[:4], true
}

// Epoch reads digits as a Unix time in seconds or milliseconds, whichever
// falls between 2000-01-01 and 2100-01-01 (they never both do).
func Epoch(raw string) (time.Time, string, bool) {
	if !allDigits(raw) || len(raw) > 15 {
		return time.Time{}, "", false
	}
	n, err := strconv.ParseInt(raw, 10, 64)
	if err != nil {
		return time.Time{}, "", false
	}
	if n >= epochFrom.Unix() && n < epochTo.Unix() {
		return time.Unix(n, 0).UTC(), "seconds", true
	}
	if n >= epochFrom.UnixMilli() && n < epochTo.UnixMilli() {
		return time.UnixMilli(n).UTC(), "milliseconds", true
	}
	return time.Time{}, "", false
}

// timeName reports a placeholder whose name says it holds a time: "ts",
// "window", "created_at", "expireAt", "epoch_ms".
func timeName(name string) bool {
	n := strings.ToLower(name)
	for _, w := range []string{"time", "ts", "epoch", "window", "second", "seconds", "millis", "ms", "at"} {
		camel := len(name) > len(w) && strings.EqualFold(name[len(name)-len(w):], w) &&
			name[len(name)-len(w)] >= 'A' && name[len(name)-len(w)] <= 'Z'
		if n == w || strings.HasSuffix(n, "_"+w) || strings.HasPrefix(n, w+"_") || camel {
			return true
		}
	}
	return false
}
