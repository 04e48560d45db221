package redisview

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrNotCluster: the connection is not (or not yet known to be) a cluster.
var ErrNotCluster = errors.New("not a Redis Cluster connection")

// ClusterSlots is how many hash slots a cluster has.
const ClusterSlots = 16384

// ClusterNode is one node of a cluster as CLUSTER NODES names it, with the
// INFO it answered.
type ClusterNode struct {
	ID   string
	Addr string // host:port, the bus port left out; "" when the cluster knows none
	// Primary: the node serves slots of its own (CLUSTER NODES "master").
	Primary bool
	// PrimaryID is a replica's primary ("" for a primary).
	PrimaryID string
	// Flags are CLUSTER NODES's flags without "myself" (master, slave,
	// fail?, fail, handshake, noaddr, nofailover).
	Flags []string
	// Fail: the cluster agreed the node is down; PFail: the node that
	// answered CLUSTER NODES cannot reach it (not agreed yet).
	Fail, PFail bool
	// LinkUp: the answering node's cluster bus link to it is connected.
	LinkUp bool
	// Slots and SlotRanges: the hash slots it serves, and in how many
	// contiguous ranges (primaries only).
	Slots, SlotRanges int
	// Info is the node's INFO; "" when it was not read (Err says why).
	Info string
	Err  string
	// Refused: the node answered, refusing INFO (ACL): it is up.
	Refused bool
}

// ClusterReport is one reading of a cluster's nodes.
type ClusterReport struct {
	// State is CLUSTER INFO's cluster_state ("ok", "fail"); "" when not
	// read (StateErr says why).
	State    string
	StateErr string
	// SlotsAssigned is how many slots some primary serves.
	SlotsAssigned int
	// Nodes: the primaries by their first slot, each followed by its
	// replicas; nodes whose primary is unknown come last.
	Nodes []ClusterNode
}

// nodeReadsAtOnce bounds the nodes read in parallel.
const nodeReadsAtOnce = 8

// ReadCluster reads every node of a cluster connection: CLUSTER NODES from
// one node (through the cluster client), then each node's INFO (and a
// primary's CLUSTER INFO) in one round trip per node, at most
// nodeReadsAtOnce at a time, each bounded by perNode. Every node is dialled
// at the address CLUSTER NODES gives (CLUSTER SLOTS leaves out replicas
// the cluster has not heard an offset from), by a client of the
// connection's that counts Keydeck's own traffic. A node that does not
// answer, or that the cluster flags fail, is listed with why, never left
// out. The error is for a cluster no node of which answers.
func ReadCluster(ctx context.Context, c *Conn, perNode time.Duration) (ClusterReport, error) {
	cc, ok := c.Client().(*redis.ClusterClient)
	if !ok {
		return ClusterReport{}, ErrNotCluster
	}
	lctx, cancel := context.WithTimeout(ctx, perNode)
	txt, err := cc.ClusterNodes(lctx).Result()
	cancel()
	if err != nil {
		return ClusterReport{}, err
	}
	rep := ClusterReport{Nodes: parseClusterNodes(txt)}
	pool := nodePoolOf(c, cc)
	pool.keep(rep.Nodes)
	states := make([]string, len(rep.Nodes))
	sem := make(chan struct{}, nodeReadsAtOnce)
	var wg sync.WaitGroup
	for i := range rep.Nodes {
		n := &rep.Nodes[i]
		rep.SlotsAssigned += n.Slots
		if n.Addr == "" {
			n.Err = "not read: the cluster knows no address for it"
			continue
		}
		if n.Fail && !n.LinkUp {
			// The cluster agreed it is down and its bus link is cut:
			// dialling a dead host each tick would only wait out the
			// timeout.
			n.Err = "not read: the cluster agreed it is down and its link is disconnected"
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			nctx, cancel := context.WithTimeout(ctx, perNode)
			defer cancel()
			p := pool.client(n.Addr).Pipeline()
			info := p.Info(nctx)
			var ci *redis.StringCmd
			if n.Primary {
				ci = p.ClusterInfo(nctx)
			}
			_, err := p.Exec(nctx)
			switch {
			case info.Err() != nil && !IsConnErr(info.Err()):
				n.Err, n.Refused = "not read: "+Refusal("INFO", info.Err()), true
				return
			case err != nil && IsConnErr(err):
				n.Err = "not reachable: " + c.SafeErr(err)
				return
			}
			n.Info = info.Val()
			if ci != nil {
				states[i], _ = infoField(ci.Val(), "cluster_state")
			}
		}()
	}
	wg.Wait()
	for _, st := range states {
		if st != "" {
			rep.State = st
			break
		}
	}
	if rep.State == "" {
		rep.StateErr = "no primary answered CLUSTER INFO"
	}
	return rep, nil
}

// nodePool is a cluster connection's clients of single nodes, by address.
type nodePool struct {
	c       *Conn
	cluster *redis.ClusterClient // the cluster client it serves
	mu      sync.Mutex
	clients map[string]*redis.Client
}

var nodePools sync.Map // *Conn → *nodePool

func nodePoolOf(c *Conn, cc *redis.ClusterClient) *nodePool {
	if v, ok := nodePools.Load(c); ok && v.(*nodePool).cluster == cc {
		return v.(*nodePool)
	}
	p := &nodePool{c: c, cluster: cc, clients: map[string]*redis.Client{}}
	if old, loaded := nodePools.Swap(c, p); loaded {
		old.(*nodePool).close()
	}
	return p
}

// client is the node at addr's client, made on first use with the
// connection's credentials, TLS and hooks.
func (p *nodePool) client(addr string) *redis.Client {
	p.mu.Lock()
	defer p.mu.Unlock()
	if cl := p.clients[addr]; cl != nil {
		return cl
	}
	o := *p.c.opts
	o.Addr, o.DB, o.PoolSize, o.MinIdleConns = addr, 0, 2, 0
	o.Dialer = hostTLSDialer(p.c.opts, p.c.target)
	cl := redis.NewClient(&o)
	cl.AddHook(ownHook{p.c.own})
	cl.AddHook(connHooks{p.c})
	p.clients[addr] = cl
	return cl
}

// keep closes the clients of nodes the cluster no longer lists.
func (p *nodePool) keep(nodes []ClusterNode) {
	live := map[string]bool{}
	for _, n := range nodes {
		live[n.Addr] = true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for a, cl := range p.clients {
		if !live[a] {
			_ = cl.Close()
			delete(p.clients, a)
		}
	}
}

func (p *nodePool) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for a, cl := range p.clients {
		_ = cl.Close()
		delete(p.clients, a)
	}
}

// closeNodeClients closes a connection's clients of single cluster
// nodes and of its sentinels (Conn.Close).
func closeNodeClients(c *Conn) {
	if v, ok := nodePools.LoadAndDelete(c); ok {
		v.(*nodePool).close()
	}
	if v, ok := sentinelPools.LoadAndDelete(c); ok {
		v.(*sentinelPool).close()
	}
}

// parseClusterNodes reads CLUSTER NODES: primaries by first slot, each
// followed by its replicas (by address); orphans last.
func parseClusterNodes(txt string) []ClusterNode {
	var all []ClusterNode
	first := map[string]int{}
	for _, line := range strings.Split(txt, "\n") {
		f := strings.Fields(strings.TrimSpace(line))
		if len(f) < 8 {
			continue
		}
		n := ClusterNode{ID: f[0], LinkUp: f[7] == "connected"}
		addr, _, _ := strings.Cut(f[1], "@")
		if h, _, _ := strings.Cut(addr, ":"); h != "" {
			n.Addr = addr
		}
		for _, fl := range strings.Split(f[2], ",") {
			switch fl {
			case "myself", "noflags":
				// "myself" is the answering node: its own link is no link.
				if fl == "myself" {
					n.LinkUp = true
				}
				continue
			case "master":
				n.Primary = true
			case "fail":
				n.Fail = true
			case "fail?":
				n.PFail = true
			}
			n.Flags = append(n.Flags, fl)
		}
		if f[3] != "-" {
			n.PrimaryID = f[3]
		}
		lowest := ClusterSlots
		for _, r := range f[8:] {
			if strings.HasPrefix(r, "[") { // a slot being migrated or imported
				continue
			}
			a, b, isRange := strings.Cut(r, "-")
			lo, err1 := strconv.Atoi(a)
			hi, err2 := lo, error(nil)
			if isRange {
				hi, err2 = strconv.Atoi(b)
			}
			if err1 != nil || err2 != nil || hi < lo {
				continue
			}
			n.Slots += hi - lo + 1
			n.SlotRanges++
			lowest = min(lowest, lo)
		}
		first[n.ID] = lowest
		all = append(all, n)
	}
	rank := func(n ClusterNode) (int, string) {
		if n.Primary {
			return first[n.ID], n.Addr
		}
		if p, ok := first[n.PrimaryID]; ok {
			return p, "\xff" + n.Addr // after its primary
		}
		return ClusterSlots + 1, n.Addr
	}
	slices.SortStableFunc(all, func(a, b ClusterNode) int {
		ra, sa := rank(a)
		rb, sb := rank(b)
		if ra != rb {
			return ra - rb
		}
		if a.Primary != b.Primary { // a primary holding no slots ties with its replicas
			if a.Primary {
				return -1
			}
			return 1
		}
		return strings.Compare(sa, sb)
	})
	return all
}

// infoField finds field in an INFO-style reply.
func infoField(txt, field string) (string, bool) {
	for _, line := range strings.Split(txt, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimRight(line, "\r"), field+":"); ok {
			return v, true
		}
	}
	return "", false
}
