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

// infoSections are the INFO sections the demo has, in Redis's order. Those
// it has no figures for (persistence, cpu, commandstats, …) are left out.
var infoSections = []string{"server", "clients", "memory", "stats", "replication", "cluster", "keyspace"}

// info answers INFO [section ...]: no section, "default", "all" and
// "everything" give every section; unknown sections give nothing, as on
// Redis.
func (h *host) info(c *server.Peer, args []string) {
	want := map[string]bool{}
	for _, a := range args {
		want[strings.ToLower(a)] = true
	}
	all := len(args) == 0 || want["default"] || want["all"] || want["everything"]
	var parts []string
	for _, sec := range infoSections {
		if all || want[sec] {
			parts = append(parts, h.infoSection(sec, time.Now()))
		}
	}
	c.WriteBulk(strings.Join(parts, "\r\n"))
}

func (h *host) infoSection(name string, now time.Time) string {
	var b strings.Builder
	b.WriteString("# " + strings.ToUpper(name[:1]) + name[1:] + "\r\n")
	field := func(k string, v any) { fmt.Fprintf(&b, "%s:%v\r\n", k, v) }
	switch name {
	case "server":
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
		if a := h.srv.Addr(); a != nil {
			field("tcp_port", a.Port)
		}
		field("server_time_usec", now.UnixMicro())
		field("uptime_in_seconds", int64(up/time.Second))
		field("uptime_in_days", int64(up/(24*time.Hour)))
	case "clients":
		field("connected_clients", h.srv.ClientsLen())
	case "memory":
		field("used_memory", h.usedMem)
		field("used_memory_human", bytesToHuman(h.usedMem))
		field("used_memory_peak", h.peakMem)
		field("used_memory_peak_human", bytesToHuman(h.peakMem))
		field("maxmemory", 0)
		field("maxmemory_human", bytesToHuman(0))
		field("maxmemory_policy", "noeviction")
	case "stats":
		field("total_connections_received", int64(h.srv.TotalConnections())-h.connsBase)
		field("total_commands_processed", h.commands())
		field("instantaneous_ops_per_sec", h.ops.rate())
		field("expired_keys", h.expired)
		field("evicted_keys", 0) // miniredis never evicts
		field("keyspace_hits", h.hits)
		field("keyspace_misses", h.misses)
	case "replication":
		field("role", "master")
		field("connected_slaves", 0)
	case "cluster":
		field("cluster_enabled", 0)
	case "keyspace":
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
			fmt.Fprintf(&b, "db%d:keys=%d,expires=%d,avg_ttl=%d\r\n", db, len(keys), expires, avg)
		}
	}
	return b.String()
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
