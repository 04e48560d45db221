package demo

import (
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/alicebob/miniredis/v2/server"
)

// memoryArgs turns MEMORY USAGE key [SAMPLES count] into the form miniredis
// knows, MEMORY USAGE key: the demo always measures the whole value, which
// is what SAMPLES 0 asks of Redis and at least as exact as any sample. A
// malformed SAMPLES gets Redis's error; other MEMORY subcommands pass as
// they are.
func memoryArgs(args []string) ([]string, string) {
	if len(args) < 3 || !strings.EqualFold(args[0], "USAGE") {
		return args, ""
	}
	for i := 2; i < len(args); i += 2 {
		if !strings.EqualFold(args[i], "SAMPLES") || i+1 >= len(args) {
			return args, "ERR syntax error"
		}
		n, err := strconv.ParseInt(args[i+1], 10, 64)
		if err != nil {
			return args, "ERR value is not an integer or out of range"
		}
		if n < 0 {
			return args, "ERR syntax error"
		}
	}
	return args[:2], ""
}

// lookedUp lists the keys a command reads, each counted once per mention as
// Redis's keyspace_hits and keyspace_misses count them. Writes (which look
// keys up for writing) and SCAN are not lookups.
func lookedUp(cmd string, args []string) []string {
	if len(args) == 0 {
		return nil
	}
	switch cmd {
	case "GET", "STRLEN", "GETRANGE", "SUBSTR", "GETBIT", "BITCOUNT", "BITPOS", "LCS",
		"TYPE", "TTL", "PTTL", "EXPIRETIME", "PEXPIRETIME", "DUMP",
		"HGET", "HMGET", "HGETALL", "HKEYS", "HVALS", "HLEN", "HEXISTS", "HSTRLEN", "HSCAN", "HRANDFIELD",
		"HTTL", "HPTTL", "HEXPIRETIME", "HPEXPIRETIME",
		"LRANGE", "LLEN", "LINDEX", "LPOS",
		"SMEMBERS", "SISMEMBER", "SMISMEMBER", "SCARD", "SSCAN", "SRANDMEMBER",
		"ZRANGE", "ZREVRANGE", "ZRANGEBYSCORE", "ZREVRANGEBYSCORE", "ZRANGEBYLEX", "ZREVRANGEBYLEX",
		"ZSCORE", "ZMSCORE", "ZRANK", "ZREVRANK", "ZCARD", "ZCOUNT", "ZLEXCOUNT", "ZSCAN", "ZRANDMEMBER",
		"XLEN", "XRANGE", "XREVRANGE",
		"GEOPOS", "GEODIST", "GEOHASH", "GEORADIUS_RO", "GEORADIUSBYMEMBER_RO", "GEOSEARCH":
		return args[:1]
	case "MGET", "EXISTS", "TOUCH", "SINTER", "SUNION", "SDIFF":
		return args
	case "MEMORY", "OBJECT":
		if len(args) >= 2 && !strings.EqualFold(args[0], "HELP") && !strings.EqualFold(args[0], "STATS") &&
			!strings.EqualFold(args[0], "DOCTOR") {
			return args[1:2]
		}
	}
	return nil
}

// config answers CONFIG GET, SET (for the settings the demo has) and
// RESETSTAT.
func (h *host) config(c *server.Peer, args []string) {
	if len(args) == 0 {
		c.WriteError("ERR wrong number of arguments for 'config' command")
		return
	}
	switch sub := strings.ToUpper(args[0]); sub {
	case "GET":
		if len(args) < 2 {
			c.WriteError("ERR wrong number of arguments for 'config|get' command")
			return
		}
		var out [][2]string
		for _, p := range h.settings() {
			for _, pat := range args[1:] {
				if ok, _ := path.Match(strings.ToLower(pat), p[0]); ok {
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
	case "SET":
		if len(args) < 3 || len(args)%2 == 0 {
			c.WriteError("ERR wrong number of arguments for 'config|set' command")
			return
		}
		set := map[string]int{}
		for i := 1; i < len(args); i += 2 {
			name := strings.ToLower(args[i])
			if name != "slowlog-log-slower-than" && name != "slowlog-max-len" {
				c.WriteError(fmt.Sprintf("ERR CONFIG SET failed (possibly related to argument '%s') - the demo server cannot change it", args[i]))
				return
			}
			n, err := strconv.Atoi(args[i+1])
			if err != nil || name == "slowlog-max-len" && n < 0 {
				c.WriteError(fmt.Sprintf("ERR CONFIG SET failed (possibly related to argument '%s') - argument couldn't be parsed into an integer", args[i]))
				return
			}
			set[name] = n
		}
		if n, ok := set["slowlog-log-slower-than"]; ok {
			h.slow.threshold = n
		}
		if n, ok := set["slowlog-max-len"]; ok {
			h.slow.max = n
			h.slow.trim()
		}
		c.WriteOK()
	case "RESETSTAT":
		h.cmdsBase += h.commands()
		h.connsBase = int64(h.srv.TotalConnections())
		h.hits, h.misses, h.expired = 0, 0, 0
		h.peakMem = h.usedMem
		c.WriteOK()
	default:
		c.WriteError(fmt.Sprintf("ERR unknown subcommand '%s'. Try CONFIG HELP.", args[0]))
	}
}

// settings are the configuration parameters the demo server has, with the
// values it really works with.
func (h *host) settings() [][2]string {
	return [][2]string{
		// miniredis publishes no keyspace notifications.
		{"notify-keyspace-events", ""},
		{"databases", strconv.Itoa(databases)},
		// No memory limit, and nothing is ever evicted.
		{"maxmemory", "0"},
		{"maxmemory-policy", "noeviction"},
		{"slowlog-log-slower-than", strconv.Itoa(h.slow.threshold)},
		{"slowlog-max-len", strconv.Itoa(h.slow.max)},
	}
}

// slowlog is Redis's slow log, kept by the host: the client commands that
// took longer than threshold microseconds to run (negative: none; 0: all).
type slowlog struct {
	threshold int
	max       int
	nextID    int64
	entries   []slowEntry // newest first
}

type slowEntry struct {
	id     int64
	at     time.Time
	micros int64
	args   []string
	name   string
}

// Redis's limits on what one entry keeps of a command.
const (
	slowMaxArgs  = 32
	slowMaxBytes = 128
)

func (s *slowlog) record(at time.Time, took time.Duration, args []string, name string) {
	us := took.Microseconds()
	if s.threshold < 0 || us < int64(s.threshold) {
		return
	}
	switch args[0] {
	case "AUTH", "HELLO": // they carry passwords
		return
	}
	kept := append([]string(nil), args...)
	if len(kept) > slowMaxArgs {
		kept = append(kept[:slowMaxArgs-1], fmt.Sprintf("... (%d more arguments)", len(args)-slowMaxArgs+1))
	}
	for i, a := range kept {
		if len(a) > slowMaxBytes {
			kept[i] = a[:slowMaxBytes] + fmt.Sprintf("... (%d more bytes)", len(a)-slowMaxBytes)
		}
	}
	s.entries = append([]slowEntry{{id: s.nextID, at: at, micros: us, args: kept, name: name}}, s.entries...)
	s.nextID++
	s.trim()
}

func (s *slowlog) trim() {
	if len(s.entries) > s.max {
		s.entries = s.entries[:s.max]
	}
}

func (h *host) slowlogCmd(c *server.Peer, args []string) {
	if len(args) == 0 {
		c.WriteError("ERR wrong number of arguments for 'slowlog' command")
		return
	}
	switch strings.ToUpper(args[0]) {
	case "GET":
		count := 10
		if len(args) > 2 {
			c.WriteError("ERR wrong number of arguments for 'slowlog|get' command")
			return
		}
		if len(args) == 2 {
			n, err := strconv.Atoi(args[1])
			if err != nil {
				c.WriteError("ERR value is not an integer or out of range")
				return
			}
			if n < -1 {
				c.WriteError("ERR count should be greater than or equal to -1")
				return
			}
			count = n
		}
		list := h.slow.entries
		if count >= 0 && count < len(list) {
			list = list[:count]
		}
		c.Block(func(w *server.Writer) {
			w.WriteLen(len(list))
			for _, e := range list {
				w.WriteLen(6)
				w.WriteInt(int(e.id))
				w.WriteInt(int(e.at.Unix()))
				w.WriteInt(int(e.micros))
				w.WriteStrings(e.args)
				w.WriteBulk("") // the client's address: the demo's peers do not know it
				w.WriteBulk(e.name)
			}
		})
	case "LEN":
		c.WriteInt(len(h.slow.entries))
	case "RESET":
		h.slow.entries = nil
		c.WriteOK()
	default:
		c.WriteError(fmt.Sprintf("ERR unknown subcommand '%s'. Try SLOWLOG HELP.", args[0]))
	}
}
