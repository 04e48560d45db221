package redisview

import (
	"context"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/clock"
)

// clusterState is what one connection's cluster walks keep between
// steps: the slot map (CLUSTER SLOTS) and which process answers on each
// node's address. It lives as long as the connection's cluster client
// (registerCluster at detection, dropCluster at Close).
type clusterState struct {
	clock clock.Clock
	// hooked: every node client counts its dials (dialCounter), so a
	// process identity read once holds until the next dial.
	hooked bool

	mu     sync.Mutex
	ranges []redis.ClusterSlot
	read   time.Time // on clock
	stale  bool      // read again at the next use
	nodes  map[string]*nodeState
}

// nodeState is one node client's address: how often it was dialled, and
// the process last seen answering there.
type nodeState struct {
	dials atomic.Uint64
	mu    sync.Mutex
	known bool
	who   identity
}

// identity is the process answering on a node's address: its cluster
// node ID (kept across restarts, carried to nodes.conf), its run_id (a
// process's own: a SCAN cursor means something only to the process that
// gave it, whose dict hash seed is its own), and the dial count when it
// was read.
type identity struct {
	id, run string
	at      uint64
}

// slotMapAge is how long a slot map read for the start of walks is used
// (on the connection's clock) unless something casts doubt on it sooner:
// a failing step, or a node the client routes a slot to that the map does
// not name.
const slotMapAge = 30 * time.Second

// maxNodeStates bounds the addresses remembered: past it they are all
// forgotten (each is asked again at its next use).
const maxNodeStates = 256

// clusterStates holds the state of each open connection's cluster client.
var clusterStates sync.Map // *redis.ClusterClient → *clusterState

// registerCluster keeps walks' state for cc on clk: call it before cc
// makes any node client (its dial counter goes on each through OnNewNode).
func registerCluster(cc *redis.ClusterClient, clk clock.Clock) *clusterState {
	st := &clusterState{clock: clock.Or(clk), hooked: true, nodes: map[string]*nodeState{}}
	cc.OnNewNode(func(n *redis.Client) { n.AddHook(dialCounter{st, n.Options().Addr}) })
	clusterStates.Store(cc, st)
	return st
}

// dropCluster forgets cc's state (its connection closed).
func dropCluster(cc *redis.ClusterClient) { clusterStates.Delete(cc) }

// stateOf is cc's state; a cluster client no connection registered gets
// one for this call only (nothing cached: every identity is read again
// after each SCAN, the slot map at each call).
func stateOf(cc *redis.ClusterClient) *clusterState {
	if v, ok := clusterStates.Load(cc); ok {
		return v.(*clusterState)
	}
	return &clusterState{clock: clock.Real{}, nodes: map[string]*nodeState{}}
}

// slots is the slot map: the one read last, unless it is older than
// slotMapAge or in doubt.
func (st *clusterState) slots(ctx context.Context, cc *redis.ClusterClient) ([]redis.ClusterSlot, error) {
	st.mu.Lock()
	if st.ranges != nil && !st.stale && st.clock.Since(st.read) < slotMapAge {
		r := st.ranges
		st.mu.Unlock()
		return r, nil
	}
	st.mu.Unlock()
	ranges, err := cc.ClusterSlots(ctx).Result()
	if err != nil {
		return nil, err
	}
	st.mu.Lock()
	st.ranges, st.read, st.stale = ranges, st.clock.Now(), false
	st.mu.Unlock()
	return ranges, nil
}

// reread is the slot map read now.
func (st *clusterState) reread(ctx context.Context, cc *redis.ClusterClient) ([]redis.ClusterSlot, error) {
	st.mu.Lock()
	st.stale = true
	st.mu.Unlock()
	return st.slots(ctx, cc)
}

// doubt: the slot map and the client's may be behind the cluster (a
// failover, a failing node, a client routing a slot elsewhere than the
// map): both are read again.
func (st *clusterState) doubt(ctx context.Context, cc *redis.ClusterClient) {
	st.mu.Lock()
	st.stale = true
	st.mu.Unlock()
	cc.ReloadState(ctx)
}

func (st *clusterState) node(addr string) *nodeState {
	st.mu.Lock()
	defer st.mu.Unlock()
	ns := st.nodes[addr]
	if ns == nil {
		if len(st.nodes) >= maxNodeStates {
			st.nodes = map[string]*nodeState{}
		}
		ns = &nodeState{}
		st.nodes[addr] = ns
	}
	return ns
}

// identity is the process answering on node now: the one read last while
// no connection was dialled since (a restarted process is reached only
// through a new connection), else asked (CLUSTER MYID and INFO server in
// one round trip).
func (st *clusterState) identity(ctx context.Context, node *redis.Client) (identity, error) {
	ns := st.node(node.Options().Addr)
	ns.mu.Lock()
	if st.hooked && ns.known && ns.who.at == ns.dials.Load() {
		who := ns.who
		ns.mu.Unlock()
		return who, nil
	}
	ns.mu.Unlock()
	at := ns.dials.Load() // before asking: a dial meanwhile makes it ask again
	pipe := node.Pipeline()
	myid := pipe.ClusterMyID(ctx)
	info := pipe.Info(ctx, "server")
	if _, err := pipe.Exec(ctx); err != nil {
		st.forget(node)
		return identity{}, err
	}
	run, _ := infoField(info.Val(), "run_id")
	who := identity{id: myid.Val(), run: run, at: at}
	if !validRunID(who.run) {
		return identity{}, fmt.Errorf("node %s: INFO server gives no run_id", node.Options().Addr)
	}
	ns.mu.Lock()
	ns.known, ns.who = true, who
	ns.mu.Unlock()
	return who, nil
}

// answered is the process that answered a command sent to node after who
// was read: who itself when no connection was dialled since; else asked
// again (the same run_id then means the same process throughout: a run_id
// never comes back).
func (st *clusterState) answered(ctx context.Context, node *redis.Client, who identity) (identity, error) {
	if st.hooked && st.node(node.Options().Addr).dials.Load() == who.at {
		return who, nil
	}
	st.forget(node)
	return st.identity(ctx, node)
}

// forget drops what is known of node's process (a command on it failed).
func (st *clusterState) forget(node *redis.Client) {
	ns := st.node(node.Options().Addr)
	ns.mu.Lock()
	ns.known = false
	ns.mu.Unlock()
}

// dialCounter counts a node client's dials.
type dialCounter struct {
	st   *clusterState
	addr string
}

func (h dialCounter) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		h.st.node(h.addr).dials.Add(1) // before: a reply on this connection is counted
		return next(ctx, network, addr)
	}
}

func (dialCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (dialCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// slotOwner is the node ID the slot map names as the slot's primary; ok
// false when no range holds the slot.
func slotOwner(ranges []redis.ClusterSlot, slot int) (id string, ok bool) {
	for _, r := range ranges {
		if int(r.Start) <= slot && slot <= int(r.End) && len(r.Nodes) > 0 {
			return r.Nodes[0].ID, true
		}
	}
	return "", false
}
