package schema

import "time"

// NextPeriod is the start of the calendar day or month after now's, in
// loc, as UTC: when a quota counted per period resets. Zero for a period
// other than "day" and "month".
func NextPeriod(period string, loc *time.Location, now time.Time) time.Time {
	t := now.In(loc)
	switch period {
	case "day":
		return time.Date(t.Year(), t.Month(), t.Day()+1, 0, 0, 0, 0, loc).UTC()
	case "month":
		return time.Date(t.Year(), t.Month()+1, 1, 0, 0, 0, 0, loc).UTC()
	}
	return time.Time{}
}
