package demo

import (
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2/server"
)

// redisVersion is the Redis release miniredis v2.40.0 is tested against and
// answers like (see its README). Servers that speak Redis's protocol report
// the Redis version they follow in redis_version, and their own name and
// version beside it, as Valkey and Dragonfly do; so does the demo.
const redisVersion = "8.4.0"

// infoSections are the INFO sections the demo has, in Redis 7.0's order.
// The one it has no figures for (cpu: the demo shares its process with
// Keydeck) is left out.
var infoSections = []string{"server", "clients", "memory", "persistence", "stats", "replication",
	"modules", "commandstats", "errorstats", "latencystats", "cluster", "keyspace"}

// notDefault are the sections INFO (and INFO default) leaves out and INFO
// all gives.
var notDefault = map[string]bool{"commandstats": true, "latencystats": true}

// info answers INFO [section ...]: no section and "default" give the
// default sections, "all" and "everything" every one; unknown sections
// give nothing, as on Redis.
func (h *host) info(c *server.Peer, args []string) {
	want := map[string]bool{}
	for _, a := range args {
		want[strings.ToLower(a)] = true
	}
	all := want["all"] || want["everything"]
	def := len(args) == 0 || want["default"]
	var parts []string
	for _, sec := range infoSections {
		if all || want[sec] || def && !notDefault[sec] {
			parts = append(parts, h.infoSection(sec, time.Now()))
		}
	}
	writeVerbatim(c, strings.Join(parts, "\r\n"))
}

func (h *host) infoSection(name string, now time.Time) string {
	var b strings.Builder
	b.WriteString("# " + strings.ToUpper(name[:1]) + name[1:] + "\r\n")
	field := func(k string, v any) { fmt.Fprintf(&b, "%s:%v\r\n", k, v) }
	switch name {
	case "server":
		h.infoServer(now, field)
	case "persistence":
		h.infoPersistence(field)
	case "stats":
		h.infoStats(field)
	case "replication":
		h.infoReplication(field)
	case "keyspace":
		h.infoKeyspace(&b)
	case "clients":
		field("connected_clients", h.srv.ClientsLen())
		field("cluster_connections", 0)
		field("blocked_clients", h.blockedClients())
		field("tracking_clients", 0) // the demo has no CLIENT TRACKING
	case "memory":
		field("used_memory", h.usedMem)
		field("used_memory_human", bytesToHuman(h.usedMem))
		field("used_memory_peak", h.peakMem)
		field("used_memory_peak_human", bytesToHuman(h.peakMem))
		field("maxmemory", h.maxMemory)
		field("maxmemory_human", bytesToHuman(h.maxMemory))
		field("maxmemory_policy", "noeviction")
	case "modules": // none
	case "commandstats", "errorstats", "latencystats":
		h.stats.section(name, field)
	case "cluster":
		field("cluster_enabled", 0)
	}
	return b.String()
}

func (h *host) infoServer(now time.Time, field func(string, any)) {
	up := now.Sub(h.started)
	field("redis_version", redisVersion)
	field("redis_mode", "standalone")
	field("server_name", "miniredis")
	if v := miniredisVersion(); v != "" {
		field("miniredis_version", v)
	}
	field("arch_bits", strconv.IntSize)
	field("process_id", os.Getpid())
	field("run_id", h.runID)
	field("tcp_port", h.port())
	field("server_time_usec", now.UnixMicro())
	field("uptime_in_seconds", int64(up/time.Second))
	field("uptime_in_days", int64(up/(24*time.Hour)))
	field("hz", 10) // the clock ticks every 100 ms (clockTick)
	field("configured_hz", 10)
	if exe, err := os.Executable(); err == nil {
		field("executable", exe)
	}
	field("config_file", "")
}

func (h *host) infoPersistence(field func(string, any)) {
	// The demo keeps its data in memory only: it never loads, saves
	// or writes an append-only file.
	field("loading", 0)
	field("async_loading", 0)
	field("rdb_bgsave_in_progress", 0)
	field("rdb_last_save_time", h.started.Unix())
	field("rdb_last_bgsave_status", "ok")
	field("rdb_last_bgsave_time_sec", -1)
	field("rdb_current_bgsave_time_sec", -1)
	field("rdb_saves", 0)
	field("aof_enabled", 0)
	field("aof_rewrite_in_progress", 0)
	field("aof_rewrite_scheduled", 0)
	field("aof_last_rewrite_time_sec", -1)
	field("aof_current_rewrite_time_sec", -1)
	field("aof_last_bgrewrite_status", "ok")
	field("aof_rewrites", 0)
	field("aof_last_write_status", "ok")
}

func (h *host) infoStats(field func(string, any)) {
	field("total_connections_received", int64(h.srv.TotalConnections())-h.connsBase)
	field("total_commands_processed", h.commands())
	field("instantaneous_ops_per_sec", h.ops.rate())
	field("expired_keys", h.expired)
	field("evicted_keys", 0) // miniredis never evicts
	field("evicted_clients", 0)
	field("rejected_connections", 0)
	field("total_net_input_bytes", h.netIn.Load())
	field("total_net_output_bytes", h.netOut.Load())
	field("keyspace_hits", h.hits)
	field("keyspace_misses", h.misses)
	channels, patterns := h.pubsubCounts()
	field("pubsub_channels", channels)
	field("pubsub_patterns", patterns)
	field("pubsubshard_channels", 0)
	field("total_error_replies", h.stats.errorsTotal)
	field("unexpected_error_replies", 0)
}

func (h *host) infoReplication(field func(string, any)) {
	field("role", "master")
	field("connected_slaves", 0)
	field("master_failover_state", "no-failover")
	field("master_replid", h.replID)
	field("master_replid2", strings.Repeat("0", 40))
	field("master_repl_offset", 0)
	field("second_repl_offset", -1)
	field("repl_backlog_active", 0)
	field("repl_backlog_size", 1048576)
	field("repl_backlog_first_byte_offset", 0)
	field("repl_backlog_histlen", 0)
}

func (h *host) infoKeyspace(b *strings.Builder) {
	for db := range databases {
		d := h.m.DB(db)
		keys := d.Keys()
		if len(keys) == 0 {
			continue
		}
		var expires int
		var ttl time.Duration
		for _, k := range keys {
			if t := d.TTL(k); t > 0 {
				expires++
				ttl += t
			}
		}
		var avg int64
		if expires > 0 {
			avg = (ttl / time.Duration(expires)).Milliseconds()
		}
		fmt.Fprintf(b, "db%d:keys=%d,expires=%d,avg_ttl=%d\r\n", db, len(keys), expires, avg)
	}
}

// miniredisVersion is the module version the binary was built with.
var miniredisVersion = sync.OnceValue(func() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	for _, dep := range bi.Deps {
		if dep.Path == "github.com/alicebob/miniredis/v2" {
			if dep.Replace != nil {
				return dep.Replace.Version
			}
			return dep.Version
		}
	}
	return ""
})

// bytesToHuman formats bytes as Redis's *_human fields do.
func bytesToHuman(n int64) string {
	const k = 1024
	switch f := float64(n); {
	case n < k:
		return strconv.FormatInt(n, 10) + "B"
	case n < k*k:
		return fmt.Sprintf("%.2fK", f/k)
	case n < k*k*k:
		return fmt.Sprintf("%.2fM", f/(k*k))
	case n < k*k*k*k:
		return fmt.Sprintf("%.2fG", f/(k*k*k))
	default:
		return fmt.Sprintf("%.2fT", f/(k*k*k*k))
	}
}
