package format

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/keydeck/keydeck/redisview/level"
)

// LimitLevel writes a limit's level in a reset preview's words: "count 5,
// limit 5 per 10m (reached)", "3 of 12 tokens left, capacity 12, refilled
// in 1m", "locked until 2026-01-01 10:00:00 UTC, in 9m".
func LimitLevel(l level.Limit, now time.Time) string {
	if l.Locked {
		if l.Until.IsZero() {
			return "locked"
		}
		left := ""
		if d := l.Until.Sub(now); d > 0 {
			left = ", in " + Duration(d.Round(time.Second))
		}
		return "locked until " + l.Until.Format("2006-01-02 15:04:05") + " UTC" + left
	}
	var parts []string
	if l.HasTokens {
		t := fmt.Sprintf("%s of %s tokens left", plainNumber(math.Floor(l.Tokens)), plainNumber(l.Capacity))
		if l.Refused {
			t += fmt.Sprintf(" (a request takes %s: refused)", plainNumber(l.Requested))
		}
		parts = append(parts, t)
	}
	if l.Capacity > 0 {
		parts = append(parts, fmt.Sprintf("capacity %s, refilled in %s", plainNumber(l.Capacity), Duration(l.Refill)))
	}
	switch {
	case l.Counted && l.Entries:
		parts = append(parts, fmt.Sprintf("%d recorded", l.Count))
	case l.Counted:
		parts = append(parts, fmt.Sprintf("count %d", l.Count))
	}
	if l.Limit > 0 {
		lim := fmt.Sprintf("limit %d", l.Limit)
		switch {
		case l.Calendar != "":
			lim += " per " + l.Calendar + " (" + l.Zone + ")"
		case l.Window > 0:
			lim += " per " + Duration(l.Window)
		}
		parts = append(parts, lim+exceeded(l.Reached()))
	}
	return strings.Join(parts, ", ")
}

func plainNumber(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func exceeded(yes bool) string {
	if yes {
		return " (reached)"
	}
	return ""
}
