package demo

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/alicebob/miniredis/v2/server"
)

// config answers CONFIG GET, SET and RESETSTAT. GET knows every parameter
// Redis 7.0 has, with the value the demo really works with: Redis's
// default where the demo behaves as Redis does by default, the demo's own
// where it differs (its port, no persistence). SET changes what the demo
// can change (the slow log, the latency monitor, maxmemory) and refuses the
// rest: Redis's own error for an unknown or immutable parameter, a plain
// one for what the demo cannot change.
func (h *host) config(c *server.Peer, args []string) {
	switch strings.ToLower(args[0]) {
	case "get":
		var out [][2]string
		for _, p := range h.settings() {
			for _, pat := range args[1:] {
				if globMatch(pat, p[0], true) {
					out = append(out, p)
					break
				}
			}
		}
		c.Block(func(w *server.Writer) {
			w.WriteMapLen(len(out))
			for _, p := range out {
				w.WriteBulk(p[0])
				w.WriteBulk(p[1])
			}
		})
	case "set":
		if len(args)%2 == 0 {
			c.WriteError("ERR wrong number of arguments for 'config|set' command")
			return
		}
		if errMsg := h.configSet(args[1:]); errMsg != "" {
			c.WriteError(errMsg)
			return
		}
		c.WriteOK()
	case "resetstat":
		h.cmdsBase += h.commands()
		h.connsBase = int64(h.srv.TotalConnections())
		h.hits, h.misses, h.expired = 0, 0, 0
		h.peakMem = h.usedMem
		h.stats = cmdStats{}
		c.WriteOK()
	}
}

// settable are the parameters CONFIG SET changes on the demo, each with
// how it reads and applies a value; apply returns Redis's reason for
// refusing it, or "".
func (h *host) settable(name string) func(v string, apply bool) string {
	integer := func(lo int64, set func(int64)) func(string, bool) string {
		return func(v string, apply bool) string {
			n, err := strconv.ParseInt(v, 10, 64)
			switch {
			case err != nil:
				return "argument couldn't be parsed into an integer"
			case n < lo:
				return fmt.Sprintf("argument must be between %d and 9223372036854775807 inclusive", lo)
			}
			if apply {
				set(n)
			}
			return ""
		}
	}
	switch name {
	case "slowlog-log-slower-than":
		return integer(-1<<63, func(n int64) { h.slow.threshold = int(n) })
	case "slowlog-max-len":
		return integer(0, func(n int64) { h.slow.max = int(n); h.slow.trim() })
	case "latency-monitor-threshold":
		return integer(0, func(n int64) { h.latency.threshold = n })
	case "notify-keyspace-events", "maxmemory-policy":
		// What the demo does (no notifications; never evicting) can be
		// set again; anything else it cannot do.
		keep := map[string]string{"notify-keyspace-events": "", "maxmemory-policy": "noeviction"}[name]
		return func(v string, _ bool) string {
			if !strings.EqualFold(v, keep) {
				return "the demo server cannot change it"
			}
			return ""
		}
	case "maxmemory":
		return func(v string, apply bool) string {
			n, ok := memoryValue(v)
			if !ok {
				return "argument must be a memory value"
			}
			if apply {
				h.maxMemory = n
			}
			return ""
		}
	}
	return nil
}

func (h *host) configSet(pairs []string) string {
	tab := loadRedisTable()
	seen := map[string]bool{}
	for i := 0; i < len(pairs); i += 2 {
		name := strings.ToLower(pairs[i])
		failed := func(why string) string {
			return fmt.Sprintf("ERR CONFIG SET failed (possibly related to argument '%s') - %s", pairs[i], why)
		}
		switch {
		case !h.known(name):
			return fmt.Sprintf("ERR Unknown option or number of arguments for CONFIG SET - '%s'", pairs[i])
		case tab.immutable(name):
			return failed("can't set immutable config")
		case seen[name]:
			return failed("duplicate parameter")
		case h.settable(name) == nil:
			return failed("the demo server cannot change it")
		}
		seen[name] = true
		if why := h.settable(name)(pairs[i+1], false); why != "" {
			return failed(why)
		}
	}
	for i := 0; i < len(pairs); i += 2 {
		h.settable(strings.ToLower(pairs[i]))(pairs[i+1], true)
	}
	return ""
}

// known reports whether Redis has the parameter (some have "" for value).
func (h *host) known(name string) bool {
	for _, p := range loadRedisTable().Config {
		if p[0] == name {
			return true
		}
	}
	return false
}

// memoryValue reads a memory amount as Redis's memtoull does: a number
// with an optional unit (k, kb, m, mb, g, gb; any case).
func memoryValue(v string) (int64, bool) {
	units := []struct {
		suffix string
		mul    int64
	}{{"kb", 1024}, {"mb", 1 << 20}, {"gb", 1 << 30}, {"k", 1000}, {"m", 1000 * 1000}, {"g", 1000 * 1000 * 1000}, {"b", 1}}
	lv, mul := strings.ToLower(v), int64(1)
	for _, u := range units {
		if strings.HasSuffix(lv, u.suffix) {
			lv, mul = strings.TrimSuffix(lv, u.suffix), u.mul
			break
		}
	}
	n, err := strconv.ParseUint(lv, 10, 63)
	if err != nil || int64(n) > (1<<63-1)/mul {
		return 0, false
	}
	return int64(n) * mul, true
}

// settings are Redis 7.0's parameters with the demo's values, by name.
func (h *host) settings() [][2]string {
	tab := loadRedisTable()
	dir, _ := os.Getwd()
	demo := map[string]string{
		"port": strconv.Itoa(h.port()),
		"bind": "127.0.0.1",
		"dir":  dir,
		// The demo keeps its data in memory only: it never saves.
		"save":                      "",
		"appendonly":                "no",
		"databases":                 strconv.Itoa(databases),
		"slowlog-log-slower-than":   strconv.Itoa(h.slow.threshold),
		"slowlog-max-len":           strconv.Itoa(h.slow.max),
		"latency-monitor-threshold": strconv.FormatInt(h.latency.threshold, 10),
		"maxmemory":                 strconv.FormatInt(h.maxMemory, 10),
		// miniredis publishes no keyspace notifications and never evicts.
		"notify-keyspace-events": "",
		"maxmemory-policy":       "noeviction",
		"pidfile":                "",
		"logfile":                "",
		"unixsocket":             "",
	}
	out := make([][2]string, 0, len(tab.Config))
	for _, p := range tab.Config {
		if v, ok := demo[p[0]]; ok {
			p[1] = v
		}
		out = append(out, p)
	}
	return out
}
