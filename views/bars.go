package views

// barWidth maps a percentage to one of Tailwind's fixed width classes; CSP
// forbids inline styles, so widths come in steps of 5%. The step is the one
// below, so that a bar is never drawn fuller than its share (1 of 12 left
// is 5%, not 10%); anything above 0 gets at least a 5% sliver, so that
// "something left" never looks like nothing.
func barWidth(pct int) string {
	if pct <= 0 {
		return "w-0"
	}
	if pct >= 100 {
		return "w-full"
	}
	return barClasses[max(1, pct/5)]
}

var barClasses = [...]string{
	"w-0", "w-[5%]", "w-[10%]", "w-[15%]", "w-[20%]", "w-[25%]", "w-[30%]", "w-[35%]", "w-[40%]", "w-[45%]",
	"w-[50%]", "w-[55%]", "w-[60%]", "w-[65%]", "w-[70%]", "w-[75%]", "w-[80%]", "w-[85%]", "w-[90%]", "w-[95%]", "w-full",
}

// histShade picks a TTL histogram cell's shade (0 = empty … 4 = most).
func histShade(level int) string {
	switch {
	case level <= 0:
		return "bg-slate-100"
	case level == 1:
		return "bg-sky-200"
	case level == 2:
		return "bg-sky-400"
	case level == 3:
		return "bg-sky-600"
	default:
		return "bg-sky-800"
	}
}

// Bars drawn against a limit (token buckets, windows, counters, quotas,
// budgets) follow one rule: the fill is the share left, and the colour
// says how close to empty it is — ok from leftOK percent left, a warning
// from leftWarn, danger below it (or when the next request is refused,
// whatever is left).
const (
	leftOK   = 50
	leftWarn = 20
)

// LeftPct is the share of limit that left is, in percent (0–100), rounded
// down so that a bar is never drawn fuller than what is left; 0 when the
// limit is unknown.
func LeftPct(left, limit float64) int {
	if limit <= 0 || left <= 0 {
		return 0
	}
	if left >= limit {
		return 100
	}
	return int(left / limit * 100)
}

// leftColour is the colour of a bar showing pct left; refused: the next
// request is refused, which is empty whatever the bar holds.
func leftColour(pct int, refused bool) string {
	switch {
	case refused || pct < leftWarn:
		return "bg-rose-500"
	case pct < leftOK:
		return "bg-amber-500"
	}
	return "bg-emerald-500"
}

// NearEmpty: a bar with pct left is drawn as in danger.
func NearEmpty(pct int) bool { return pct < leftWarn }

// leftBar is the classes of the inner element of a bar showing pct left.
func leftBar(pct int, refused bool) string {
	return barWidth(pct) + " " + leftColour(pct, refused)
}
