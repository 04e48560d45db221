package server

import (
	"context"
	"fmt"
	"github.com/keydeck/keydeck/redisview"
	"sort"
	"strconv"
	"strings"

	"github.com/keydeck/keydeck/views/format"
)

// ReadMemoryStats reads MEMORY STATS as fields, in the server's order,
// a database's nested entries named "db.0.overhead.hashtable.main".
func ReadMemoryStats(ctx context.Context, srv redisview.Server) ([]Field, error) {
	c := srv.Client()
	v, err := c.Do(ctx, "MEMORY", "STATS").Result()
	if err != nil {
		return nil, refusal("MEMORY STATS", err)
	}
	var out []Field
	flattenStats("", v, &out)
	return out, nil
}

// ReadMemoryDoctor reads MEMORY DOCTOR: the server's own advice, in words.
func ReadMemoryDoctor(ctx context.Context, srv redisview.Server) (string, error) {
	c := srv.Client()
	txt, err := c.Do(ctx, "MEMORY", "DOCTOR").Text()
	if err != nil {
		return "", refusal("MEMORY DOCTOR", err)
	}
	return txt, nil
}

// flattenStats walks MEMORY STATS's reply: a flat array of name, value
// pairs (RESP2) or a map (RESP3), a value itself such an array or map.
func flattenStats(prefix string, v any, out *[]Field) {
	add := func(name string, val any) {
		if prefix != "" {
			name = prefix + "." + name
		}
		switch val.(type) {
		case []any, map[any]any, map[string]any:
			flattenStats(name, val, out)
		default:
			raw := fmt.Sprint(val)
			*out = append(*out, Field{Name: name, Raw: raw, Shown: memUnit(name, raw), Help: memHelp[name]})
		}
	}
	switch t := v.(type) {
	case []any:
		for i := 0; i+1 < len(t); i += 2 {
			add(fmt.Sprint(t[i]), t[i+1])
		}
	case map[any]any:
		keys := make([]string, 0, len(t))
		vals := map[string]any{}
		for k, val := range t {
			keys = append(keys, fmt.Sprint(k))
			vals[fmt.Sprint(k)] = val
		}
		// A map has no order: the server's is lost, so a stable one.
		sort.Strings(keys)
		for _, k := range keys {
			add(k, vals[k])
		}
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			add(k, t[k])
		}
	}
}

// memUnit shows a MEMORY STATS value: most are bytes; counts, ratios and
// percentages say so in their names.
func memUnit(name, raw string) string {
	n, err := strconv.ParseInt(raw, 10, 64)
	f, ferr := strconv.ParseFloat(raw, 64)
	switch {
	case ferr != nil:
		return raw
	case strings.HasSuffix(name, "percentage"):
		return strconv.FormatFloat(f, 'f', 1, 64) + "%"
	case strings.HasSuffix(name, "ratio") || name == "fragmentation":
		return strconv.FormatFloat(f, 'f', 2, 64) + "×"
	case strings.HasSuffix(name, ".count") || strings.HasSuffix(name, "keys.count") || name == "keys.count":
		return format.Count(n)
	case err == nil:
		return format.Bytes(n)
	}
	return raw
}

var memHelp = map[string]string{
	"peak.allocated":                "The most memory ever allocated since start.",
	"total.allocated":               "Memory allocated now (INFO used_memory).",
	"startup.allocated":             "Memory the server used at start, before any data.",
	"replication.backlog":           "The replication backlog: recent writes kept for replicas that reconnect.",
	"clients.slaves":                "Buffers of connected replicas.",
	"clients.normal":                "Buffers of ordinary clients; large when clients read replies slowly or send huge commands.",
	"aof.buffer":                    "Writes waiting to be appended to the AOF.",
	"overhead.total":                "Memory the server uses for itself: everything but the data.",
	"keys.count":                    "Keys in every database.",
	"keys.bytes-per-key":            "Average memory per key, overhead included.",
	"dataset.bytes":                 "Memory used by the data itself.",
	"dataset.percentage":            "The data's share of the memory allocated beyond start-up.",
	"fragmentation":                 "RSS ÷ allocated memory; well above 1.5 is memory lost to fragmentation.",
	"fragmentation.bytes":           "Bytes lost to fragmentation.",
	"lua.caches":                    "Cached Lua scripts.",
	"functions.caches":              "Loaded functions (FUNCTION LOAD).",
	"allocator.fragmentation.ratio": "Fragmentation inside the allocator (jemalloc); active defrag can reclaim it.",
}
