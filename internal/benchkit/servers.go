package benchkit

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/redistest"
)

// Servers are the redis-servers a benchmark command starts on loopback
// ports and stops at its end: one server, or the primaries of a cluster.
type Servers struct {
	Addrs   []string
	Cluster bool
	// Nodes are clients of each server (database 0), for the readings.
	Nodes []*redis.Client
	stop  func()
	dir   string
}

// Start starts one redis-server, or a cluster of primaries when
// primaries > 0, with their files in a temporary directory (removed by
// Stop) and the extra configuration given, e.g. the SLOWLOG threshold.
func Start(name string, primaries int, extra ...string) (*Servers, error) {
	dir, err := os.MkdirTemp("", "keydeck-"+name)
	if err != nil {
		return nil, err
	}
	s := &Servers{dir: dir, Cluster: primaries > 0}
	if s.Cluster {
		s.Addrs, s.stop, err = redistest.LaunchCluster(dir, primaries, extra...)
	} else {
		var addr string
		addr, s.stop, err = redistest.Launch(dir, extra...)
		s.Addrs = []string{addr}
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	for _, a := range s.Addrs {
		s.Nodes = append(s.Nodes, redis.NewClient(&redis.Options{Addr: a}))
	}
	return s, nil
}

// URL is the URL Keydeck connects with.
func (s *Servers) URL() string {
	if s.Cluster {
		return redistest.ClusterURL(s.Addrs)
	}
	return "redis://" + s.Addrs[0]
}

// Client writes to every server: a cluster client routing by slot, or
// the one server's client.
func (s *Servers) Client() redis.UniversalClient {
	if s.Cluster {
		return redis.NewClusterClient(&redis.ClusterOptions{Addrs: s.Addrs, PoolSize: 32})
	}
	return redis.NewClient(&redis.Options{Addr: s.Addrs[0], PoolSize: 32})
}

// Stop stops the servers and removes their files.
func (s *Servers) Stop() {
	for _, n := range s.Nodes {
		n.Close()
	}
	s.stop()
	os.RemoveAll(s.dir)
}

// Each runs fn on every node at once and returns the first error.
func (s *Servers) Each(fn func(i int, c *redis.Client) error) error {
	errs := make([]error, len(s.Nodes))
	var wg sync.WaitGroup
	for i, c := range s.Nodes {
		wg.Go(func() { errs[i] = fn(i, c) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// CPUEach is each node's CPU over d, in % of one core, measured together.
func CPUEach(ctx context.Context, nodes []*redis.Client, d time.Duration) ([]float64, error) {
	out := make([]float64, len(nodes))
	errs := make([]error, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Go(func() { out[i], errs[i] = CPUOver(ctx, n, d) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Latency is the p50/p99/p99.9 of the named commands (INFO latencystats,
// Redis 7) since the statistics were last reset, in words.
func Latency(ctx context.Context, c *redis.Client, cmds ...string) (string, error) {
	txt, err := c.Info(ctx, "latencystats").Result()
	if err != nil {
		return "", err
	}
	var out []string
	for _, line := range strings.Split(txt, "\n") {
		name, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		cmd := strings.TrimPrefix(name, "latency_percentiles_usec_")
		if ok && cmd != name && slices.Contains(cmds, cmd) {
			out = append(out, cmd+" "+strings.TrimSpace(v)+" µs")
		}
	}
	slices.Sort(out)
	return strings.Join(out, "; "), nil
}

// SlowSummary sums one server's SLOWLOG up, the benchmark's own commands
// (INFO, SLOWLOG, CONFIG) left out.
type SlowSummary struct {
	Logged  int           // entries
	Over2ms int           // entries over 2 ms
	Slowest time.Duration // the slowest entry
	Cmd     string        // its command, shortened
	// NoiseFloor is the slowest O(1) command logged (PTTL, TYPE, a
	// length): only the scheduler taking the CPU from redis-server in the
	// middle of it makes one slow.
	NoiseFloor time.Duration
}

var constantTime = map[string]bool{"pttl": true, "ttl": true, "type": true, "strlen": true, "hlen": true, "llen": true, "scard": true, "zcard": true, "xlen": true, "exists": true}

// Slow reads the whole SLOWLOG of c.
func Slow(ctx context.Context, c *redis.Client) (SlowSummary, error) {
	var s SlowSummary
	logs, err := c.SlowLogGet(ctx, -1).Result()
	if err != nil {
		return s, err
	}
	for _, l := range logs {
		if len(l.Args) == 0 {
			continue
		}
		cmd := strings.ToLower(l.Args[0])
		switch cmd {
		case "info", "slowlog", "config":
			continue
		}
		s.Logged++
		if l.Duration > 2*time.Millisecond {
			s.Over2ms++
		}
		if l.Duration > s.Slowest {
			s.Slowest = l.Duration
			s.Cmd = fmt.Sprintf("%.60q", strings.Join(l.Args, " "))
		}
		if constantTime[cmd] && l.Duration > s.NoiseFloor {
			s.NoiseFloor = l.Duration
		}
	}
	return s, nil
}
