package views

// barWidth maps a percentage to one of Tailwind's fixed width classes; CSP
// forbids inline styles, so widths come in steps of 5%.
func barWidth(pct int) string {
	if pct <= 0 {
		return "w-0"
	}
	if pct >= 100 {
		return "w-full"
	}
	return barClasses[(pct+4)/5]
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
