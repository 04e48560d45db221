package demo

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
)

// cmdStats are INFO's commandstats, errorstats and latencystats: each
// command's calls, time and failures, each error code's count, and each
// command's latency percentiles, from what the host measured and replied.
type cmdStats struct {
	byCmd       map[string]*cmdStat
	errors      map[string]int64
	errorsTotal int64
}

type cmdStat struct {
	calls, usec, rejected, failed int64
	// hist counts durations in microseconds rounded to two significant
	// digits (as HdrHistogram keeps them, within 1%): bounded, and precise
	// enough for percentiles.
	hist map[int64]int64
}

// record counts one command by its full name ("" for a command the demo
// does not have) from its duration and the head of its reply. A command
// refused before it ran (unknown, wrong arity) is rejected, as Redis
// counts it; one that ran and answered an error failed. A queued command
// (MULTI) is counted only if refused.
func (s *cmdStats) record(name string, took time.Duration, head string, queued bool) {
	code := ""
	if strings.HasPrefix(head, "-") {
		code, _, _ = strings.Cut(strings.TrimPrefix(head, "-"), " ")
		code, _, _ = strings.Cut(code, "\r")
		if s.errors == nil {
			s.errors = map[string]int64{}
		}
		s.errors[code]++
		s.errorsTotal++
	}
	if name == "" {
		return
	}
	if s.byCmd == nil {
		s.byCmd = map[string]*cmdStat{}
	}
	st := s.byCmd[name]
	if st == nil {
		st = &cmdStat{hist: map[int64]int64{}}
		s.byCmd[name] = st
	}
	rejected := code != "" && (strings.HasPrefix(head, "-ERR wrong number of arguments") ||
		strings.HasPrefix(head, "-ERR unknown subcommand") || strings.HasPrefix(head, "-ERR syntax error") && queued)
	switch {
	case rejected:
		st.rejected++
		return
	case queued:
		return
	}
	us := took.Microseconds()
	st.calls++
	st.usec += us
	if code != "" {
		st.failed++
	}
	st.hist[twoDigits(max(us, 1))]++
}

// twoDigits rounds n up to two significant digits.
func twoDigits(n int64) int64 {
	scale := int64(1)
	for n >= 100*scale {
		scale *= 10
	}
	return (n + scale - 1) / scale * scale
}

// percentile is the duration at or below which p percent of calls ran.
func (st *cmdStat) percentile(p float64) int64 {
	var total int64
	keys := make([]int64, 0, len(st.hist))
	for k, n := range st.hist {
		keys = append(keys, k)
		total += n
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	want := int64(math.Ceil(p / 100 * float64(total)))
	var seen int64
	for _, k := range keys {
		seen += st.hist[k]
		if seen >= want {
			return k
		}
	}
	return 0
}

func (s *cmdStats) names() []string {
	out := make([]string, 0, len(s.byCmd))
	for n := range s.byCmd {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// section writes INFO commandstats, errorstats or latencystats.
func (s *cmdStats) section(name string, field func(string, any)) {
	switch name {
	case "commandstats":
		for _, n := range s.names() {
			st := s.byCmd[n]
			per := 0.0
			if st.calls > 0 {
				per = float64(st.usec) / float64(st.calls)
			}
			field("cmdstat_"+n, fmt.Sprintf("calls=%d,usec=%d,usec_per_call=%.2f,rejected_calls=%d,failed_calls=%d",
				st.calls, st.usec, per, st.rejected, st.failed))
		}
	case "errorstats":
		codes := make([]string, 0, len(s.errors))
		for c := range s.errors {
			codes = append(codes, c)
		}
		sort.Strings(codes)
		for _, c := range codes {
			field("errorstat_"+c, fmt.Sprintf("count=%d", s.errors[c]))
		}
	case "latencystats":
		for _, n := range s.names() {
			if st := s.byCmd[n]; st.calls > 0 {
				field("latency_percentiles_usec_"+n, fmt.Sprintf("p50=%.3f,p99=%.3f,p99.9=%.3f",
					float64(st.percentile(50)), float64(st.percentile(99)), float64(st.percentile(99.9))))
			}
		}
	}
}
