package redistest

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Cluster is a Redis Cluster of three primaries, each with one replica,
// on loopback ports owned by a test.
type Cluster struct {
	t     testing.TB
	Nodes []*Server // the first three are the primaries at creation
}

// clusterNodeTimeout is short so that a killed primary fails over within
// a few seconds (the replica waits for the node timeout, then an election).
const clusterNodeTimeout = "1000"

// StartCluster starts six cluster-enabled redis-servers and joins them with
// `redis-cli --cluster create … --cluster-replicas 1`, then waits until every
// node says cluster_state:ok and every replica is linked. Everything is
// stopped at test end.
func StartCluster(t testing.TB) *Cluster {
	t.Helper()
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		t.Fatal("redis-cli not found: install redis-tools (make deps does)")
	}
	c := &Cluster{t: t}
	addrs := make([]string, 6)
	for i := range addrs {
		s := startServer(t, true, // its bus port chosen with its port
			"--cluster-enabled", "yes",
			"--cluster-config-file", "nodes.conf",
			"--cluster-node-timeout", clusterNodeTimeout,
			// A replica fails over however long it was cut off: tests kill
			// primaries on purpose.
			"--cluster-replica-validity-factor", "0",
		)
		c.Nodes = append(c.Nodes, s)
		addrs[i] = s.Addr
	}
	args := append([]string{"--cluster", "create"}, addrs...)
	args = append(args, "--cluster-replicas", "1", "--cluster-yes")
	// Bounded: a hung create must not outlive the test (no Cleanup runs
	// on a go test timeout).
	cctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	out, err := exec.CommandContext(cctx, cli, args...).CombinedOutput()
	cancel()
	if err != nil {
		t.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	ctx := context.Background()
	Eventually(t, 30*time.Second, "every cluster node reports cluster_state:ok, knows every node, and every replica is linked", func() bool {
		for _, s := range c.Nodes {
			if !nodeReady(ctx, s.Addr, len(c.Nodes)) {
				return false
			}
		}
		return true
	})
	return c
}

// nodeReady: the node says cluster_state:ok, knows n nodes, and (a replica)
// has its link to the primary up.
func nodeReady(ctx context.Context, addr string, n int) bool {
	cl := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: time.Second})
	defer cl.Close()
	info, err := cl.ClusterInfo(ctx).Result()
	if err != nil || !strings.Contains(info, "cluster_state:ok") || !strings.Contains(info, "cluster_known_nodes:"+strconv.Itoa(n)+"\r") {
		return false
	}
	repl, err := cl.Info(ctx, "replication").Result()
	if err != nil {
		return false
	}
	return strings.Contains(repl, "role:master") || strings.Contains(repl, "master_link_status:up")
}

// URL is a redis:// URL of one node (a seed: the client discovers the rest).
func (c *Cluster) URL() string { return "redis://" + c.Nodes[0].Addr }

// Client is a cluster client on every node, closed at test end.
func (c *Cluster) Client() *redis.ClusterClient {
	addrs := make([]string, len(c.Nodes))
	for i, s := range c.Nodes {
		addrs[i] = s.Addr
	}
	cl := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
	c.t.Cleanup(func() { _ = cl.Close() })
	return cl
}

// Fill writes n string keys prefix0 … prefix(n-1), "v" each, through a
// cluster client: they spread over every primary by their slots.
func (c *Cluster) Fill(prefix string, n int) {
	c.t.Helper()
	ctx := context.Background()
	p := c.Client().Pipeline()
	for i := range n {
		p.Set(ctx, prefix+strconv.Itoa(i), "v", 0)
	}
	if _, err := p.Exec(ctx); err != nil {
		c.t.Fatalf("filling the cluster: %v", err)
	}
}

// Primaries are the nodes that are primaries now (after failovers too),
// as a live node sees them.
func (c *Cluster) Primaries() []*Server {
	c.t.Helper()
	ctx := context.Background()
	for _, s := range c.Nodes {
		if !s.Running() {
			continue
		}
		cl := redis.NewClient(&redis.Options{Addr: s.Addr})
		txt, err := cl.ClusterNodes(ctx).Result()
		cl.Close()
		if err != nil {
			continue
		}
		var out []*Server
		for _, line := range strings.Split(txt, "\n") {
			f := strings.Fields(line)
			if len(f) < 3 || !strings.Contains(f[2], "master") || strings.Contains(f[2], "fail") {
				continue
			}
			addr, _, _ := strings.Cut(f[1], "@")
			for _, n := range c.Nodes {
				if n.Addr == addr {
					out = append(out, n)
				}
			}
		}
		return out
	}
	c.t.Fatal("no cluster node answers CLUSTER NODES")
	return nil
}

// NodeOf is the node whose slots hold key, as a live node sees it now.
func (c *Cluster) NodeOf(key string) *Server {
	c.t.Helper()
	ctx := context.Background()
	slot := Slot(key)
	for _, s := range c.Nodes {
		if !s.Running() {
			continue
		}
		cl := redis.NewClient(&redis.Options{Addr: s.Addr})
		slots, err := cl.ClusterSlots(ctx).Result()
		cl.Close()
		if err != nil {
			continue
		}
		for _, r := range slots {
			if r.Start <= slot && slot <= r.End && len(r.Nodes) > 0 {
				for _, n := range c.Nodes {
					if n.Addr == r.Nodes[0].Addr {
						return n
					}
				}
			}
		}
	}
	c.t.Fatalf("no node holds slot %d", slot)
	return nil
}

// KeyOn returns a key name starting with prefix whose slot is on node s.
func (c *Cluster) KeyOn(s *Server, prefix string) string {
	c.t.Helper()
	for i := range 100000 {
		k := prefix + strconv.Itoa(i)
		if c.NodeOf(k) == s {
			return k
		}
	}
	c.t.Fatalf("no key %s… on %s", prefix, s.Addr)
	return ""
}

// Slot is the cluster slot of key (CRC16 of the key or its {hash tag}, mod 16384).
func Slot(key string) int {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	return int(crc16(key) % 16384)
}

func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

// Running reports whether the server's process is up (not Stopped).
func (s *Server) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cmd != nil
}

// WaitFailover waits until a replica has taken over every slot of the
// stopped primary dead and every live node says cluster_state:ok.
func (c *Cluster) WaitFailover(dead *Server, d time.Duration) {
	c.t.Helper()
	ctx := context.Background()
	Eventually(c.t, d, fmt.Sprintf("a replica takes over from %s and the cluster is ok", dead.Addr), func() bool {
		for _, s := range c.Nodes {
			if !s.Running() {
				continue
			}
			cl := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1})
			info, err := cl.ClusterInfo(ctx).Result()
			slots, serr := cl.ClusterSlots(ctx).Result()
			cl.Close()
			if err != nil || serr != nil || !strings.Contains(info, "cluster_state:ok") {
				return false
			}
			for _, r := range slots {
				if len(r.Nodes) == 0 || r.Nodes[0].Addr == dead.Addr {
					return false
				}
			}
		}
		return true
	})
}

// NodeID is the server's cluster node ID (CLUSTER MYID).
func (s *Server) NodeID() string {
	s.t.Helper()
	c := redis.NewClient(&redis.Options{Addr: s.Addr})
	defer c.Close()
	id, err := c.ClusterMyID(context.Background()).Result()
	if err != nil {
		s.t.Fatalf("CLUSTER MYID on %s: %v", s.Addr, err)
	}
	return id
}

// RunID is the server process's run_id (INFO server): it changes when the
// server restarts, its node ID does not.
func (s *Server) RunID() string {
	s.t.Helper()
	c := redis.NewClient(&redis.Options{Addr: s.Addr})
	defer c.Close()
	txt, err := c.Info(context.Background(), "server").Result()
	if err != nil {
		s.t.Fatalf("INFO server on %s: %v", s.Addr, err)
	}
	for _, line := range strings.Split(txt, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "run_id:"); ok {
			return v
		}
	}
	s.t.Fatalf("INFO server on %s: no run_id", s.Addr)
	return ""
}

// ReplicaOf is a running replica of primary p, as p's CLUSTER NODES says.
func (c *Cluster) ReplicaOf(p *Server) *Server {
	c.t.Helper()
	id := p.NodeID()
	cl := redis.NewClient(&redis.Options{Addr: p.Addr})
	defer cl.Close()
	txt, err := cl.ClusterNodes(context.Background()).Result()
	if err != nil {
		c.t.Fatalf("CLUSTER NODES on %s: %v", p.Addr, err)
	}
	for _, line := range strings.Split(txt, "\n") {
		f := strings.Fields(line)
		if len(f) < 4 || f[3] != id || !strings.Contains(f[2], "slave") {
			continue
		}
		addr, _, _ := strings.Cut(f[1], "@")
		for _, n := range c.Nodes {
			if n.Addr == addr && n.Running() {
				return n
			}
		}
	}
	c.t.Fatalf("no running replica of %s", p.Addr)
	return nil
}

// Takeover promotes replica r at once (CLUSTER FAILOVER TAKEOVER: no
// agreement of the other primaries, its old primary stays up and becomes
// its replica) and waits until every node sees r as a primary and says
// cluster_state:ok.
func (c *Cluster) Takeover(r *Server, d time.Duration) {
	c.t.Helper()
	ctx := context.Background()
	cl := redis.NewClient(&redis.Options{Addr: r.Addr})
	defer cl.Close()
	if err := cl.Do(ctx, "CLUSTER", "FAILOVER", "TAKEOVER").Err(); err != nil {
		c.t.Fatalf("CLUSTER FAILOVER TAKEOVER on %s: %v", r.Addr, err)
	}
	Eventually(c.t, d, fmt.Sprintf("every node sees %s as a primary and the cluster is ok", r.Addr), func() bool {
		return c.allSee(ctx, func(slots []redis.ClusterSlot) bool {
			for _, s := range slots {
				if len(s.Nodes) > 0 && s.Nodes[0].Addr == r.Addr {
					return true
				}
			}
			return false
		})
	})
}

// WaitOK waits until every running node says cluster_state:ok.
func (c *Cluster) WaitOK(d time.Duration) {
	c.t.Helper()
	Eventually(c.t, d, "every running node says cluster_state:ok", func() bool {
		return c.allSee(context.Background(), func([]redis.ClusterSlot) bool { return true })
	})
}

// allSee: every running node says cluster_state:ok and its CLUSTER SLOTS
// satisfies ok.
func (c *Cluster) allSee(ctx context.Context, ok func([]redis.ClusterSlot) bool) bool {
	for _, s := range c.Nodes {
		if !s.Running() {
			continue
		}
		cl := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1})
		info, err := cl.ClusterInfo(ctx).Result()
		slots, serr := cl.ClusterSlots(ctx).Result()
		cl.Close()
		if err != nil || serr != nil || !strings.Contains(info, "cluster_state:ok") || !ok(slots) {
			return false
		}
	}
	return true
}

// Reshard moves n slots, and their keys, from primary from to primary to
// (redis-cli --cluster reshard), and waits until every node agrees.
func (c *Cluster) Reshard(from, to *Server, n int) {
	c.t.Helper()
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		c.t.Fatal("redis-cli not found: install redis-tools (make deps does)")
	}
	cctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	out, err := exec.CommandContext(cctx, cli, "--cluster", "reshard", to.Addr,
		"--cluster-from", from.NodeID(), "--cluster-to", to.NodeID(),
		"--cluster-slots", strconv.Itoa(n), "--cluster-yes", "--cluster-pipeline", "100").CombinedOutput()
	if err != nil {
		c.t.Fatalf("redis-cli --cluster reshard: %v\n%s", err, out)
	}
	toID := to.NodeID()
	c.t.Logf("resharded %d slots from %s to %s", n, from.Addr, to.Addr)
	Eventually(c.t, 30*time.Second, "every node agrees on the moved slots", func() bool {
		var want int
		return c.allSee(context.Background(), func(slots []redis.ClusterSlot) bool {
			got := 0
			for _, s := range slots {
				if len(s.Nodes) > 0 && s.Nodes[0].ID == toID {
					got += int(s.End - s.Start + 1)
				}
			}
			if want == 0 {
				want = got
			}
			return got == want
		})
	})
}

// WaitReplicated waits until every primary's replicas are online and
// have everything it wrote (their offsets reached its
// master_repl_offset): a failover then loses no key. Under load a node
// may have been failed over and resynced meanwhile; a kill before its new
// replica caught up would lose keys, not test a walk.
func (c *Cluster) WaitReplicated(d time.Duration) {
	c.t.Helper()
	ctx := context.Background()
	Eventually(c.t, d, "every primary's replicas are online and caught up", func() bool {
		for _, p := range c.Primaries() {
			cl := redis.NewClient(&redis.Options{Addr: p.Addr, MaxRetries: -1})
			txt, err := cl.Info(ctx, "replication").Result()
			cl.Close()
			if err != nil || !caughtUp(txt) {
				return false
			}
		}
		return true
	})
}

// caughtUp: INFO replication of a primary with at least one replica, each
// online at the primary's offset.
func caughtUp(txt string) bool {
	var off string
	var replicas []string
	for _, line := range strings.Split(txt, "\n") {
		line = strings.TrimSpace(line)
		if v, ok := strings.CutPrefix(line, "master_repl_offset:"); ok {
			off = v
		}
		if strings.HasPrefix(line, "slave") && strings.Contains(line, "state=") {
			replicas = append(replicas, line)
		}
	}
	if off == "" || len(replicas) == 0 {
		return false
	}
	for _, r := range replicas {
		if !strings.Contains(r, "state=online") || !strings.Contains(r, "offset="+off+",") {
			return false
		}
	}
	return true
}
