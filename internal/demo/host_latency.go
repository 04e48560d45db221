package demo

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/alicebob/miniredis/v2/server"
)

// latencyMonitor is Redis's latency monitor for the events the demo has:
// "command" and "fast-command", the measured duration of each command
// (fast-command for those Redis flags fast), kept in milliseconds once it
// reaches latency-monitor-threshold (0: off).
type latencyMonitor struct {
	threshold int64 // ms
	events    map[string]*latencySeries
}

// latencyHistory is how many samples Redis keeps per event
// (LATENCY_TS_LEN).
const latencyHistory = 160

type latencySample struct {
	at int64 // unix seconds
	ms int64
}

// latencySeries is one event's samples, one per second at most (the
// second's worst), oldest first, and its worst of all time.
type latencySeries struct {
	samples []latencySample
	max     int64
}

func (l *latencyMonitor) observe(event string, at time.Time, took time.Duration) {
	ms := took.Milliseconds()
	if l.threshold == 0 || ms < l.threshold {
		return
	}
	if l.events == nil {
		l.events = map[string]*latencySeries{}
	}
	s := l.events[event]
	if s == nil {
		s = &latencySeries{}
		l.events[event] = s
	}
	s.max = max(s.max, ms)
	sec := at.Unix()
	if n := len(s.samples); n > 0 && s.samples[n-1].at == sec {
		s.samples[n-1].ms = max(s.samples[n-1].ms, ms)
		return
	}
	s.samples = append(s.samples, latencySample{at: sec, ms: ms})
	if len(s.samples) > latencyHistory {
		s.samples = s.samples[1:]
	}
}

func (l *latencyMonitor) names() []string {
	var out []string
	for n := range l.events {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// latencyCmd answers LATENCY LATEST, HISTORY, RESET and DOCTOR.
func (h *host) latencyCmd(c *server.Peer, args []string) {
	l := &h.latency
	switch strings.ToLower(args[0]) {
	case "latest":
		names := l.names()
		c.Block(func(w *server.Writer) {
			w.WriteLen(len(names))
			for _, n := range names {
				s := l.events[n]
				last := s.samples[len(s.samples)-1]
				w.WriteLen(4)
				w.WriteBulk(n)
				w.WriteInt(int(last.at))
				w.WriteInt(int(last.ms))
				w.WriteInt(int(s.max))
			}
		})
	case "history":
		var samples []latencySample
		if s := l.events[strings.ToLower(args[1])]; s != nil {
			samples = s.samples
		}
		c.Block(func(w *server.Writer) {
			w.WriteLen(len(samples))
			for _, e := range samples {
				w.WriteLen(2)
				w.WriteInt(int(e.at))
				w.WriteInt(int(e.ms))
			}
		})
	case "reset":
		n := 0
		if len(args) == 1 {
			n = len(l.events)
			l.events = nil
		}
		for _, e := range args[1:] {
			if _, ok := l.events[strings.ToLower(e)]; ok {
				delete(l.events, strings.ToLower(e))
				n++
			}
		}
		c.WriteInt(n)
	case "doctor":
		writeVerbatim(c, h.latencyReport(time.Now()))
	}
}

// latencyReport is LATENCY DOCTOR's report, in Redis's words, for the
// events the demo records.
func (h *host) latencyReport(now time.Time) string {
	l := &h.latency
	if len(l.events) == 0 && l.threshold == 0 {
		return "I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis instance. " +
			"You may use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" in order to enable it. " +
			"If we weren't in a deep space mission I'd suggest to take a look at https://redis.io/topics/latency-monitor.\n"
	}
	if len(l.events) == 0 {
		return "Dave, no latency spike was observed during the lifetime of this Redis instance, not in the slightest bit. " +
			"I honestly think you ought to sit down calmly, take a stress pill, and think things over.\n"
	}
	var b strings.Builder
	b.WriteString("Dave, I have observed latency spikes in this Redis instance. You don't mind talking about it, do you Dave?\n\n")
	var slowlogOff, slowlogTuning, commands, fast bool
	for i, n := range l.names() {
		s := l.events[n]
		var sum, oldest int64
		for _, e := range s.samples {
			sum += e.ms
			if oldest == 0 || e.at < oldest {
				oldest = e.at
			}
		}
		count := int64(len(s.samples))
		avg := sum / count
		var dev int64
		for _, e := range s.samples {
			dev += abs64(e.ms - avg)
		}
		period := max(now.Unix()-oldest, 1)
		fmt.Fprintf(&b, "%d. %s: %d latency spikes (average %dms, mean deviation %dms, period %.2f sec). Worst all time event %dms.\n",
			i+1, n, count, avg, dev/count, float64(period)/float64(count), s.max)
		switch n {
		case "command":
			commands = true
			slowlogOff = h.slow.threshold < 0
			slowlogTuning = !slowlogOff && int64(h.slow.threshold/1000) > l.threshold
		case "fast-command":
			fast = true
		}
	}
	b.WriteString("\nI have a few advices for you:\n\n")
	if slowlogOff {
		fmt.Fprintf(&b, "- There are latency issues with potentially slow commands you are using. Try to enable the Slow Log Redis feature using the command 'CONFIG SET slowlog-log-slower-than %d'. If the Slow log is disabled Redis is not able to log slow commands execution for you.\n", l.threshold*1000)
	}
	if slowlogTuning {
		fmt.Fprintf(&b, "- Your current Slow Log configuration only logs events that are slower than your configured latency monitor threshold. Please use 'CONFIG SET slowlog-log-slower-than %d'.\n", l.threshold*1000)
	}
	if commands {
		b.WriteString("- Check your Slow Log to understand what are the commands you are running which are too slow to execute. Please check https://redis.io/commands/slowlog for more information.\n")
		b.WriteString("- Deleting, expiring or evicting (because of maxmemory policy) large objects is a blocking operation. If you have very large objects that are often deleted, expired, or evicted, try to fragment those objects into multiple smaller objects.\n")
	}
	if fast {
		b.WriteString("- The system is slow to execute Redis code paths not containing system calls. This usually means the system does not provide Redis CPU time to run for long periods. You should try to:\n" +
			"  1) Lower the system load.\n" +
			"  2) Use a computer / VM just for Redis if you are running other software in the same system.\n" +
			"  3) Check if you have a \"noisy neighbour\" problem.\n" +
			"  4) Check with 'redis-cli --intrinsic-latency 100' what is the intrinsic latency in your system.\n" +
			"  5) Check if the problem is allocator-related by recompiling Redis with MALLOC=libc, if you are using Jemalloc. However this may create fragmentation problems.\n")
	}
	return b.String()
}

func abs64(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}
