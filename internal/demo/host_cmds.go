package demo

import (
	"strconv"
	"strings"
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
