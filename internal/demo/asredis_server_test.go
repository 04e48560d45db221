package demo

import (
	"slices"
	"strings"
	"testing"
)

func TestAsRedisSlowlog(t *testing.T) {
	t.Parallel()
	tw := startTwin(t)
	for _, proto := range []int{2, 3} {
		d, r := tw.conns(proto)
		both(d, r, "CLIENT", "SETNAME", "slowpoke")
		both(d, r, "CONFIG", "SET", "slowlog-log-slower-than", "0")
		both(d, r, "SLOWLOG", "RESET")
		long := strings.Repeat("x", 300)
		many := []string{"RPUSH", "l"}
		for i := range 40 {
			many = append(many, strings.Repeat("e", i%3+1))
		}
		both(d, r, "SET", "k", long)
		both(d, r, "sEt", "k", "v")
		both(d, r, many...)
		both(d, r, "AUTH", "secret")
		both(d, r, "HELLO", "2", "AUTH", "default", "pw")
		both(d, r, "MULTI")
		both(d, r, "EXEC")
		dl, rl := both(d, r, "SLOWLOG", "GET", "-1")
		if shape(dl) != shape(rl) {
			t.Fatalf("RESP%d: SLOWLOG GET\n demo %s\n real %s", proto, text(dl), text(rl))
		}
		for i := range dl.A {
			de, re := dl.A[i], rl.A[i]
			if text(de.A[3]) != text(re.A[3]) {
				t.Errorf("RESP%d: slow log entry %d args\n demo %s\n real %s", proto, i, text(de.A[3]), text(re.A[3]))
			}
			if de.A[4].S != d.c.LocalAddr().String() || de.A[5].S != "slowpoke" || re.A[5].S != "slowpoke" {
				t.Errorf("RESP%d: slow log entry %d client %s %s, want %s slowpoke", proto, i, de.A[4].S, de.A[5].S, d.c.LocalAddr())
			}
		}
		for _, args := range [][]string{{"SLOWLOG", "LEN"}, {"SLOWLOG", "GET", "x"}, {"SLOWLOG", "GET", "-2"},
			{"SLOWLOG", "NOSUCH"}, {"SLOWLOG"}, {"SLOWLOG", "GET", "1", "2"}, {"SLOWLOG", "RESET"},
			{"CONFIG", "SET", "slowlog-log-slower-than", "-1"}, {"GET", "k"}, {"SLOWLOG", "LEN"}} {
			if dr, rr := both(d, r, args...); text(dr) != text(rr) {
				t.Errorf("RESP%d: %q\n demo %s\n real %s", proto, args, text(dr), text(rr))
			}
		}
		both(d, r, "CONFIG", "SET", "slowlog-log-slower-than", "0", "slowlog-max-len", "2")
		for range 4 {
			both(d, r, "PING")
		}
		if dr, rr := both(d, r, "SLOWLOG", "LEN"); text(dr) != "2" || text(rr) != "2" {
			t.Errorf("RESP%d: SLOWLOG LEN with slowlog-max-len 2: demo %s, real %s", proto, text(dr), text(rr))
		}
	}
}

// busyScript keeps a server busy for some milliseconds on both.
const busyScript = "local i = 0 while i < 500000 do i = i + 1 end return i"

func TestAsRedisLatency(t *testing.T) {
	t.Parallel()
	tw := startTwin(t)
	for _, proto := range []int{2, 3} {
		d, r := tw.conns(proto)
		both(d, r, "CONFIG", "SET", "latency-monitor-threshold", "0")
		both(d, r, "LATENCY", "RESET")
		for _, args := range [][]string{{"LATENCY", "LATEST"}, {"LATENCY", "DOCTOR"}, {"LATENCY", "HISTORY", "command"},
			{"CONFIG", "GET", "latency-monitor-threshold"}, {"LATENCY", "NOSUCH"}, {"LATENCY", "HISTORY"},
			{"EVAL", busyScript, "0"}, {"LATENCY", "LATEST"},
			{"CONFIG", "SET", "latency-monitor-threshold", "1"}, {"LATENCY", "DOCTOR"},
			{"CONFIG", "SET", "latency-monitor-threshold", "-1"}, {"CONFIG", "SET", "latency-monitor-threshold", "x"}} {
			if dr, rr := both(d, r, args...); text(dr) != text(rr) {
				t.Errorf("RESP%d: %q\n demo %s\n real %s", proto, args, text(dr), text(rr))
			}
		}
		both(d, r, "EVAL", busyScript, "0")
		dl, rl := both(d, r, "LATENCY", "LATEST")
		if shape(dl) != shape(rl) || len(dl.A) != 1 || dl.A[0].A[0].S != "command" || dl.A[0].A[2].N < 1 {
			t.Fatalf("RESP%d: LATENCY LATEST after a slow script\n demo %s\n real %s", proto, text(dl), text(rl))
		}
		dh, rh := both(d, r, "LATENCY", "HISTORY", "command")
		// As many samples as seconds had an event: compare one.
		if dh.K != rh.K || len(dh.A) == 0 || len(rh.A) == 0 || shape(dh.A[0]) != shape(rh.A[0]) {
			t.Errorf("RESP%d: LATENCY HISTORY command\n demo %s\n real %s", proto, text(dh), text(rh))
		}
		dd, rd := both(d, r, "LATENCY", "DOCTOR")
		if dd.K != rd.K || !strings.HasPrefix(dd.S, "txt:Dave, I have observed latency spikes") && !strings.HasPrefix(dd.S, "Dave, I have observed") ||
			firstLine(dd.S) != firstLine(rd.S) || !strings.Contains(dd.S, "1. command: ") || !strings.Contains(rd.S, "1. command: ") {
			t.Errorf("RESP%d: LATENCY DOCTOR\n demo %q\n real %q", proto, dd.S, rd.S)
		}
		for _, args := range [][]string{{"LATENCY", "RESET", "nosuch"}, {"LATENCY", "RESET", "command"}, {"LATENCY", "LATEST"}} {
			if dr, rr := both(d, r, args...); text(dr) != text(rr) {
				t.Errorf("RESP%d: %q\n demo %s\n real %s", proto, args, text(dr), text(rr))
			}
		}
	}
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

func TestAsRedisConfig(t *testing.T) {
	t.Parallel()
	tw := startTwin(t)
	for _, proto := range []int{2, 3} {
		d, r := tw.conns(proto)
		dAll, rAll := both(d, r, "CONFIG", "GET", "*")
		if names(dAll) != names(rAll) {
			t.Errorf("RESP%d: CONFIG GET * names\n demo %s\n real %s", proto, names(dAll), names(rAll))
		}
		for _, pats := range [][]string{{"maxmemory*"}, {"SLOWLOG-*", "latency-monitor-threshold"}, {"*max-*-entries"},
			{"nosuch"}, {"hash-max-listpack-[ev]*", "databases", "databases"}} {
			args := append([]string{"CONFIG", "GET"}, pats...)
			if dr, rr := both(d, r, args...); dr.K != rr.K || names(dr) != names(rr) {
				t.Errorf("RESP%d: %q\n demo %s\n real %s", proto, args, text(dr), text(rr))
			}
		}
		// Above maxmemory (noeviction), writes are refused, reads served.
		both(d, r, "SET", "big", strings.Repeat("x", 10000))
		tw.demo.measureMemory()
		for _, args := range [][]string{{"CONFIG", "SET", "maxmemory", "1"}, {"SET", "k", "v"}, {"GET", "big"},
			{"DEL", "big"}, {"CONFIG", "SET", "maxmemory", "0"}, {"SET", "k", "v"}} {
			dr, rr := both(d, r, args...)
			if args[0] == "GET" {
				dr, rr = reply{K: dr.K, S: dr.S[:10]}, reply{K: rr.K, S: rr.S[:10]}
			}
			if text(dr) != text(rr) {
				t.Errorf("RESP%d: %q\n demo %s\n real %s", proto, args, text(dr), text(rr))
			}
		}
		for _, args := range [][]string{
			{"CONFIG", "SET", "slowlog-max-len", "64"}, {"CONFIG", "GET", "slowlog-max-len"},
			{"CONFIG", "SET", "slowlog-max-len", "x"}, {"CONFIG", "SET", "slowlog-max-len", "-1"},
			{"CONFIG", "SET", "slowlog-log-slower-than", "x"},
			{"CONFIG", "SET", "logfile", "x"}, {"CONFIG", "SET", "daemonize", "yes"}, {"CONFIG", "SET", "databases", "4"},
			{"CONFIG", "SET", "nosuch", "1"}, {"CONFIG", "SET", "slowlog-max-len"}, {"CONFIG", "SET", "maxmemory", "1x"},
			{"CONFIG", "SET", "slowlog-max-len", "1", "slowlog-max-len", "2"},
			{"CONFIG", "SET", "maxmemory", "1gb"}, {"CONFIG", "GET", "maxmemory"},
			{"CONFIG", "SET", "maxmemory", "0"}, {"CONFIG", "RESETSTAT"}, {"CONFIG", "NOSUCH"}, {"CONFIG"},
			{"CONFIG", "GET"}, {"CONFIG", "RESETSTAT", "x"}, {"CONFIG", "SET", "notify-keyspace-events", ""},
			{"CONFIG", "SET", "maxmemory-policy", "noeviction"},
		} {
			if dr, rr := both(d, r, args...); text(dr) != text(rr) {
				t.Errorf("RESP%d: %q\n demo %s\n real %s", proto, args, text(dr), text(rr))
			}
		}
	}
}

// names lists a map reply's (or flat pair array's) field names, sorted.
func names(r reply) string {
	var out []string
	for i := 0; i+1 < len(r.A); i += 2 {
		out = append(out, r.A[i].S)
	}
	slices.Sort(out)
	return strings.Join(slices.Compact(out), " ")
}

func TestAsRedisMemory(t *testing.T) {
	t.Parallel()
	tw := startTwin(t)
	for _, proto := range []int{2, 3} {
		d, r := tw.conns(proto)
		both(d, r, "SET", "k", "v")
		tw.demo.measureMemory()
		ds, rs := both(d, r, "MEMORY", "STATS")
		if ds.K != rs.K {
			t.Fatalf("RESP%d: MEMORY STATS demo %s, real %s", proto, shape(ds), shape(rs))
		}
		real := map[string]reply{}
		for i := 0; i+1 < len(rs.A); i += 2 {
			real[rs.A[i].S] = rs.A[i+1]
		}
		for i := 0; i+1 < len(ds.A); i += 2 {
			name, v := ds.A[i].S, ds.A[i+1]
			if rv, ok := real[name]; !ok || rv.K != v.K {
				t.Errorf("RESP%d: MEMORY STATS %s: demo %s, real %s", proto, name, text(v), text(rv))
			}
		}
		stats := map[string]int64{}
		for i := 0; i+1 < len(ds.A); i += 2 {
			stats[ds.A[i].S] = ds.A[i+1].N
		}
		info := d.do("INFO", "memory").S
		if !strings.Contains(info, "\r\nused_memory:"+itoa(stats["total.allocated"])+"\r\n") || stats["keys.count"] != 1 {
			t.Errorf("RESP%d: MEMORY STATS %v disagrees with INFO memory %q", proto, stats, info)
		}
		if dr, rr := both(d, r, "MEMORY", "DOCTOR"); text(dr) != text(rr) {
			t.Errorf("RESP%d: MEMORY DOCTOR\n demo %s\n real %s", proto, text(dr), text(rr))
		}
		for _, args := range [][]string{{"MEMORY", "USAGE", "nosuch"}, {"MEMORY", "NOSUCH"}, {"MEMORY", "STATS", "x"}} {
			if dr, rr := both(d, r, args...); text(dr) != text(rr) {
				t.Errorf("RESP%d: %q\n demo %s\n real %s", proto, args, text(dr), text(rr))
			}
		}
	}
}

func itoa(n int64) string { return text(reply{K: ":", N: n}) }

func TestAsRedisInfo(t *testing.T) {
	t.Parallel()
	tw := startTwin(t)
	for _, proto := range []int{2, 3} {
		d, r := tw.conns(proto)
		both(d, r, "SET", "k", "v")
		both(d, r, "GET", "k")
		both(d, r, "GET", "k", "x")
		both(d, r, "NOSUCH")
		both(d, r, "SUBSCRIBE")
		for _, which := range []string{"", "default", "all", "everything", "commandstats", "errorstats"} {
			args := []string{"INFO"}
			if which != "" {
				args = append(args, which)
			}
			di, ri := both(d, r, args...)
			if di.K != ri.K {
				t.Fatalf("RESP%d: INFO %s: demo %s, real %s", proto, which, shape(di), shape(ri))
			}
			ds, rs := infoParse(di.S), infoParse(ri.S)
			var dNames, rNames []string
			for _, s := range ds {
				dNames = append(dNames, s.name)
			}
			for _, s := range rs {
				if s.name != "CPU" {
					rNames = append(rNames, s.name)
				}
			}
			if !slices.Equal(dNames, rNames) {
				t.Errorf("RESP%d: INFO %s sections\n demo %v\n real %v", proto, which, dNames, rNames)
			}
			for _, s := range ds {
				rsec := rs[slices.IndexFunc(rs, func(x infoSec) bool { return x.name == s.name })]
				for _, f := range s.fields {
					if f == "server_name" || f == "miniredis_version" || strings.HasPrefix(f, "db") {
						continue
					}
					if !slices.Contains(rsec.fields, f) {
						t.Errorf("RESP%d: INFO %s has %s, Redis's %s section has not", proto, s.name, f, s.name)
					}
				}
			}
		}
		dc, rc := both(d, r, "INFO", "commandstats")
		for _, want := range []string{"cmdstat_get:calls=1,", ",rejected_calls=1,failed_calls=0", "cmdstat_set:calls=1,"} {
			if !strings.Contains(dc.S, want) || !strings.Contains(rc.S, want) {
				t.Errorf("RESP%d: INFO commandstats lacks %q\n demo %q\n real %q", proto, want, dc.S, rc.S)
			}
		}
		de, re := both(d, r, "INFO", "errorstats")
		if !strings.Contains(de.S, "errorstat_ERR:count=") || !strings.Contains(re.S, "errorstat_ERR:count=") {
			t.Errorf("RESP%d: INFO errorstats\n demo %q\n real %q", proto, de.S, re.S)
		}
		both(d, r, "CONFIG", "RESETSTAT")
		if dc, rc := both(d, r, "INFO", "commandstats"); strings.Contains(dc.S, "cmdstat_get") || strings.Contains(rc.S, "cmdstat_get") {
			t.Errorf("RESP%d: INFO commandstats after CONFIG RESETSTAT\n demo %q\n real %q", proto, dc.S, rc.S)
		}
	}
}

type infoSec struct {
	name   string
	fields []string
}

func infoParse(txt string) []infoSec {
	var out []infoSec
	for _, line := range strings.Split(strings.TrimPrefix(txt, "txt:"), "\r\n") {
		if name, ok := strings.CutPrefix(line, "# "); ok {
			out = append(out, infoSec{name: name})
		} else if k, _, ok := strings.Cut(line, ":"); ok && len(out) > 0 {
			out[len(out)-1].fields = append(out[len(out)-1].fields, k)
		}
	}
	return out
}

func TestAsRedisPubSub(t *testing.T) {
	t.Parallel()
	tw := startTwin(t)
	for _, proto := range []int{2, 3} {
		d, r := tw.conns(proto)
		ds, rs := tw.conns(proto)
		for _, args := range [][]string{{"SUBSCRIBE", "news", "alerts"}, {"PSUBSCRIBE", "ev:*"}} {
			if dr, rr := both(ds, rs, args...); text(dr) != text(rr) {
				t.Errorf("RESP%d: %q\n demo %s\n real %s", proto, args, text(dr), text(rr))
			}
			if len(args) == 3 { // one reply per channel
				if dr, rr := ds.readNext(), rs.readNext(); text(dr) != text(rr) {
					t.Errorf("RESP%d: second reply to %q\n demo %s\n real %s", proto, args, text(dr), text(rr))
				}
			}
		}
		for _, args := range [][]string{{"PUBSUB", "CHANNELS"}, {"PUBSUB", "CHANNELS", "n*"}, {"PUBSUB", "NUMSUB", "news", "nosuch"},
			{"PUBSUB", "NUMPAT"}, {"PUBLISH", "news", "hello"}, {"PUBLISH", "ev:1", "x"}, {"PUBSUB", "NOSUCH"}} {
			dr, rr := both(d, r, args...)
			if sortedText(dr) != sortedText(rr) {
				t.Errorf("RESP%d: %q\n demo %s\n real %s", proto, args, text(dr), text(rr))
			}
		}
		if dm, rm := ds.readNext(), rs.readNext(); text(dm) != text(rm) {
			t.Errorf("RESP%d: message\n demo %s\n real %s", proto, text(dm), text(rm))
		}
		if dm, rm := ds.readNext(), rs.readNext(); text(dm) != text(rm) {
			t.Errorf("RESP%d: pattern message\n demo %s\n real %s", proto, text(dm), text(rm))
		}
		dl, rl := both(d, r, "CLIENT", "LIST", "TYPE", "pubsub")
		for _, f := range []string{"flags", "sub", "psub", "cmd"} {
			if dv, rv := clientField(dl.S, f), clientField(rl.S, f); dv != rv {
				t.Errorf("RESP%d: the subscriber's %s: demo %q, real %q", proto, f, dv, rv)
			}
		}
		di, ri := both(d, r, "INFO", "stats")
		for _, f := range []string{"pubsub_channels:2", "pubsub_patterns:1"} {
			if !strings.Contains(di.S, f) || !strings.Contains(ri.S, f) {
				t.Errorf("RESP%d: INFO stats lacks %s", proto, f)
			}
		}
		both(ds, rs, "UNSUBSCRIBE")
	}
}
