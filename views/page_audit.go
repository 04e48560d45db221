package views

// outcomeClass colours an audit record by how it ended.
func outcomeClass(outcome string) string {
	switch outcome {
	case "ok":
		return "bg-emerald-50 text-emerald-800 ring-1 ring-emerald-200"
	case "":
		return "bg-slate-100 text-slate-700"
	default:
		return "bg-rose-50 text-rose-800 ring-1 ring-rose-200"
	}
}

func outcomeSuffix(outcome string) string {
	if outcome == "" {
		return ""
	}
	return ": " + outcome
}
